#!/usr/bin/env bash
# One-sided put/get between two hosts through RdmaConnection's one-sided API (issue 16, seed 002), against
# the two-sided path, on 1 and 2 equal shaped rails: two network namespaces of its own (rdmaflux-os-a,
# rdmaflux-os-b; veth rail i = 10.78.i.1 <-> 10.78.i.2, tc tbf on both ends), the soft provider's IP
# fabric, `rdmaflux bench TEST --listen` in host B and `--connect` in host A for put-bw, get-bw and bw.
#
#   scripts/onesided-netns-bench.sh [--rate 400mbit] [--sizes 4k,64k,1m,4m] [--iterations 20] [--out FILE]
#
# Prints one table: MB/s per test, size and rail count, and the 2-rail / 1-rail ratio. Needs root and `ip`/`tc`
# (else it prints why and exits 0) and the samples jar (./rdmaflux --help builds it; ONESIDED_JAR overrides).
# Its namespaces are its own, so it does not disturb scripts/netns-rails.sh users; it removes them on exit.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
RATE=400mbit
SIZES=4k,64k,1m,4m
ITER=20
OUT=""
while [ $# -gt 0 ]; do
  case "$1" in
    --rate) RATE="${2:?--rate needs a tc rate like 400mbit}"; shift 2 ;;
    --sizes) SIZES="${2:?--sizes needs a list like 4k,1m}"; shift 2 ;;
    --iterations) ITER="${2:?--iterations needs a number}"; shift 2 ;;
    --out) OUT="${2:?--out needs a file}"; shift 2 ;;
    *) echo "onesided-netns-bench: unknown option '$1'; options: --rate R --sizes L --iterations N --out FILE" >&2; exit 2 ;;
  esac
done
skip() { echo "onesided-netns-bench skipped: $*"; exit 0; }
[ "$(id -u)" = 0 ] || skip "not root (ip netns needs CAP_SYS_ADMIN)"
command -v ip >/dev/null && command -v tc >/dev/null || skip "ip/tc (iproute2) missing"
JAR="${ONESIDED_JAR:-$ROOT/samples/target/rdmaflux-samples.jar}"
[ -f "$JAR" ] || skip "$JAR is missing; build it first with ./rdmaflux --help"
# its own pair of namespaces, made and removed by netns-rails.sh
export NETNS_NAME=rdmaflux-os NETNS_SUBNET=10.78 NETNS_VETH=ros
NA=rdmaflux-os-a
NB=rdmaflux-os-b
P=10.78
trap 'bash "$ROOT/scripts/netns-rails.sh" down >/dev/null' EXIT
bash "$ROOT/scripts/netns-rails.sh" up --rails 2 --rates "$RATE,$RATE" >/dev/null
# shellcheck disable=SC2046
J=(java $(cat "$ROOT/.mvn/jvm-flags") -jar "$JAR" bench)
port=7700
declare -A mbps
run() { # test rails -> fills mbps[test,rails,size]
  local t="$1" rails="$2" la lb
  if [ "$rails" = 1 ]; then la="$P.1.1"; lb="$P.1.2"; else la="$P.1.1,$P.2.1"; lb="$P.1.2,$P.2.2"; fi
  port=$((port + 1))
  local log; log="$(mktemp)"
  ip netns exec "$NB" timeout 300 "${J[@]}" "$t" --listen "$P.1.2:$port" --addresses "$lb" --sizes "$SIZES" --timeout-s 120 >"$log" 2>&1 &
  local lpid=$!
  for _ in $(seq 1 100); do grep -q "listening at" "$log" && break; sleep 0.1; done
  local table
  table="$(ip netns exec "$NA" timeout 300 "${J[@]}" "$t" --connect "$P.1.2:$port" --addresses "$la" --sizes "$SIZES" --iterations "$ITER")" \
    || { echo "onesided-netns-bench: $t over $rails rail(s) failed:"; echo "$table"; cat "$log"; exit 1; }
  wait "$lpid" || { echo "onesided-netns-bench: the $t listener failed:"; cat "$log"; exit 1; }
  echo "$table" | grep -q "VERIFICATION FAILED" && { echo "$table"; exit 3; }
  while read -r size bw; do mbps[$t,$rails,$size]="$bw"; done < <(echo "$table" | awk '/^[0-9]/ {print $1, $2}')
  rm -f "$log"
}
for t in put-bw get-bw bw; do for r in 1 2; do run "$t" "$r"; done; done
{
  echo "# one-sided put/get vs two-sided bw through RdmaConnection, two namespaces, rails tbf $RATE each, $ITER iterations, $(date -u +%FT%TZ), load $(cut -d' ' -f1 /proc/loadavg)"
  printf "%-9s %-8s %12s %12s %10s\n" test size "1 rail MB/s" "2 rails MB/s" "2 / 1"
  for t in put-bw get-bw bw; do
    for size in $(echo "${!mbps[@]}" | tr ' ' '\n' | awk -F, -v t="$t" '$1 == t && $2 == 1 {print $3}' | sort -n); do
      one="${mbps[$t,1,$size]}"; two="${mbps[$t,2,$size]:-0}"
      printf "%-9s %-8s %12s %12s %10s\n" "$t" "$size" "$one" "$two" "$(awk -v a="$one" -v b="$two" 'BEGIN { printf "%.2f", (a > 0 ? b / a : 0) }')"
    done
  done
} | tee ${OUT:+"$OUT"}
