#!/usr/bin/env bash
# Striping over two real processes in two network namespaces (issue 5, "the same on the
# two-namespace, two-veth harness"): adaptive, even and static-weights striping over tbf-shaped
# veth rails with the soft provider's IP fabric, each figure a ratio to the links' aggregate rate.
#
#   scripts/striping-netns-bench.sh [--mib N] [--rates 400mbit,100mbit] [--equal-rates 250mbit,250mbit]
#                                   [-- pipeline options for both ends; default --chunk-kib 1024]
#
# For each rail set (4:1 --rates, then the equal --equal-rates) it brings up rdmaflux-a/rdmaflux-b
# with scripts/netns-rails.sh, and for each policy streams N MiB (default 128) of random bytes with
# `rdmaflux pipeline --connect` in host A to `pipeline --listen` in host B (rail i: 10.77.i.1 ->
# 10.77.i.2, SHA-256 verified by the receiver) in 1 MiB messages (16 in flight, the pipeline's
# default), then prints the sender's throughput and its ratio to the sum of the tbf rates (tbf counts
# Ethernet/IP/TCP headers too, so about 0.956 is the ceiling) and to the sum of each rail's
# throughput alone, measured first in the same setup.
# Policies: 4:1 rails: adaptive (from equal weights), even, weighted:4,1; equal rails: adaptive, even.
#
# Two more figures per run, because a whole-run figure of a fresh JVM pair mixes the rails with
# JVM warm-up: (1) "steady" = the payload rate while the middle 80 % of the run's bytes crossed the
# rails (veth tx counters of host A sampled every 50 ms; the first 10 % hold JIT warm-up, TCP buffer
# autotuning and the adaptive weights' convergence from equal weights, about 0.3-0.5 s at 20-40 MiB/s
# whatever the policy; the last 10 % the drain and the verdict). A fixed warm-up costs a 4:1 or
# striped run (57 MiB/s) twice what it costs one 250 Mbit rail (28 MiB/s), so whole-run ratios
# against one rail are biased against striping. (2) "tcp" = plain TCP on each rail alone
# (scripts/TcpReference.java, kernel defaults, rate after its first 0.5 s): what a TCP payload
# stream can carry on that tbf link. tbf counts Ethernet/IP/TCP headers, so at MTU 1500 that is
# 1448/1514 = 0.956 of the tbf rate; "/ tcp" compares steady with the sum of the rails' tcp figures.
#
# Uses samples/target/rdmaflux-samples.jar as built (./rdmaflux --help builds it), or STRIPING_JAR
# (e.g. a copy in /tmp while others rebuild); put extra classes first with STRIPING_EXTRA_CP (e.g.
# rail-striping/target/classes to try an unreleased policy).
# Holds /tmp/rdmaflux-bench.lock while measuring (benchmarks share 2 cores) and
# /tmp/rdmaflux-netns.lock around the namespaces (each waited for at most 120 s). Every java
# process runs under `timeout` (90 s), a receiver must listen within 30 s, so the 9 runs and 4 TCP
# references end within about 25 minutes whatever hangs (about 3 minutes when all is well at 128 MiB,
# 5 at 512 MiB); the namespaces are always torn down (trap). Not root, no namespaces, no jar, or namespaces busy with someone else's processes: prints
# "striping netns bench skipped: <why>" and exits 0.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
MIB=128
RATES=400mbit,100mbit
EQUAL_RATES=250mbit,250mbit
RUN_TIMEOUT=90
LOCK_WAIT=120
# the issue's figures are for 1 MiB messages (as the in-JVM benchmark); the pipeline's own default
# chunk is 256 KiB. Any "-- options" replace this default.
PIPELINE_ARGS=(--chunk-kib 1024)
while [ $# -gt 0 ]; do
  case "$1" in
    --mib) MIB="${2:?--mib needs a number}"; shift 2 ;;
    --rates) RATES="${2:?--rates needs r1,r2}"; shift 2 ;;
    --equal-rates) EQUAL_RATES="${2:?--equal-rates needs r1,r2}"; shift 2 ;;
    --) shift; PIPELINE_ARGS=("$@"); break ;;
    *) echo "usage: $0 [--mib N] [--rates r1,r2] [--equal-rates r1,r2] [-- pipeline options for both ends]" >&2; exit 2 ;;
  esac
done
[[ "$MIB" =~ ^[1-9][0-9]{0,3}$ ]] || { echo "striping-netns-bench: --mib must be 1..9999 but it was '$MIB'" >&2; exit 2; }

skip() { echo "striping netns bench skipped: $*"; exit 0; }
[ "$(id -u)" = 0 ] || skip "not root (ip netns needs CAP_SYS_ADMIN)"
for tool in ip tc timeout flock awk; do
  command -v "$tool" >/dev/null 2>&1 || skip "'$tool' is not installed"
done
JAR="${STRIPING_JAR:-$ROOT/samples/target/rdmaflux-samples.jar}"
[ -f "$JAR" ] || skip "$JAR is missing; build it first with ./rdmaflux --help"
CP="${STRIPING_EXTRA_CP:+$STRIPING_EXTRA_CP:}$JAR"

# one user of the namespaces at a time; someone else's run in them (two-host-it, a manual
# pipeline) is left alone
exec 8>/tmp/rdmaflux-netns.lock
flock -w "$LOCK_WAIT" 8 || skip "the namespaces stayed locked (/tmp/rdmaflux-netns.lock) for ${LOCK_WAIT}s"
for ns in rdmaflux-a rdmaflux-b; do
  if ip netns list 2>/dev/null | grep -qw "$ns" && [ -n "$(ip netns pids "$ns" 2>/dev/null)" ]; then
    skip "namespace $ns is in use by pid(s) $(ip netns pids "$ns" | tr '\n' ' ')"
  fi
done
if ! ip netns add rdmaflux-probe 2>/dev/null; then
  skip "'ip netns add' does not work here (no network namespace support or no permission)"
fi
ip netns del rdmaflux-probe

WORK="$(mktemp -d /tmp/rdmaflux-striping-netns.XXXXXX)"
RECEIVER_PID=""
SAMPLER_PID=""
cleanup() {
  local rc=$?
  if [ -n "$SAMPLER_PID" ]; then
    kill "$SAMPLER_PID" 2>/dev/null || true
  fi
  if [ -n "$RECEIVER_PID" ]; then
    kill "$RECEIVER_PID" 2>/dev/null || true
    wait "$RECEIVER_PID" 2>/dev/null || true
  fi
  "$ROOT/scripts/netns-rails.sh" down >/dev/null 2>&1 || true
  exit $rc
}
trap cleanup EXIT INT TERM

head -c "$((MIB << 20))" /dev/urandom > "$WORK/input.bin"
JVM_FLAGS="$(cat "$ROOT/.mvn/jvm-flags")"
PORT=7600

# Mbit/s of a tc rate like 400mbit, 1gbit, 500kbit
mbit() {
  awk -v r="$1" 'BEGIN {
    n = r + 0; u = tolower(r); sub(/^[0-9.]+/, "", u)
    if (u == "gbit") n *= 1000; else if (u == "kbit") n /= 1000; else if (u != "mbit") { print "bad"; exit }
    print n }'
}

# wire_rate <samples file> <payload bytes>: from "time tx1 tx2" lines (host A's veth tx counters), the
# payload MiB/s while the middle 80 % of the run's wire bytes crossed the rails (wire rate scaled by
# payload / wire bytes of the whole run)
wire_rate() {
  awk -v payload="$2" '
    NF == 3 { n++; t[n] = $1; w[n] = $2 + $3 }
    function cross(level,   i, f) {
      for (i = 2; i <= n; i++) if (w[i] - w[1] >= level) {
        f = (level - (w[i - 1] - w[1])) / (w[i] - w[i - 1]); return t[i - 1] + f * (t[i] - t[i - 1]) }
      return t[n] }
    END {
      total = w[n] - w[1]
      if (n < 3 || total <= payload * 0.9) { print "nan"; exit }
      a = cross(0.1 * total); b = cross(0.9 * total)
      if (b <= a) { print "nan"; exit }
      printf "%.1f", 0.8 * total / (b - a) * (payload / total) / 1048576 }' "$1"
}

# host A's veth tx byte counters every 50 ms until killed (bash builtins only, so the sampling costs
# next to no CPU beside the two JVMs; `ip netns exec` execs bash, so its pid is the loop's)
SAMPLE_WIRE='exec 3<> <(:); while :; do
  read -r a < /sys/class/net/rfa1/statistics/tx_bytes; read -r b < /sys/class/net/rfa2/statistics/tx_bytes
  echo "$EPOCHREALTIME $a $b"; read -r -t 0.05 -u 3 || true; done'

# tcp_reference <rail> <label>: plain TCP from host A to host B over that rail alone for 4 s; leaves MiB/s in $TCP_MIBPS
tcp_reference() {
  local i="$1" log="$WORK/$2-tcp-rail$1" waited=0
  PORT=$((PORT + 1))
  timeout 60 ip netns exec rdmaflux-b java "$ROOT/scripts/TcpReference.java" receive "10.77.$i.2:$PORT" >"$log.receiver" 2>&1 &
  RECEIVER_PID=$!
  until grep -q "listening at" "$log.receiver" 2>/dev/null; do
    kill -0 "$RECEIVER_PID" 2>/dev/null || { echo "striping-netns-bench: TCP reference receiver exited early:" >&2; cat "$log.receiver" >&2; return 1; }
    [ "$waited" -lt 300 ] || { echo "striping-netns-bench: TCP reference receiver not listening after 30 s" >&2; return 1; }
    sleep 0.1; waited=$((waited + 1))
  done
  timeout 60 ip netns exec rdmaflux-a java "$ROOT/scripts/TcpReference.java" send "10.77.$i.2:$PORT" 4 >"$log.sender" 2>&1 \
    || { echo "striping-netns-bench: TCP reference sender on rail $i failed:" >&2; cat "$log.sender" >&2; return 1; }
  wait "$RECEIVER_PID" || true
  RECEIVER_PID=""
  TCP_MIBPS="$(awk '$1 == "tcp" { print $3 }' "$log.receiver")"
  [ -n "$TCP_MIBPS" ] || { echo "striping-netns-bench: TCP reference on rail $i gave no figure:" >&2; cat "$log.receiver" >&2; return 1; }
}

# transfer <log> <policy> <rail numbers, e.g. "1 2">: one pipeline transfer from host A to host B
# over those rails; leaves the sender's MiB/s in $MIBPS and the steady payload rate in $STEADY
transfer() {
  local log="$1" policy="$2" rails_used="$3" listen_addrs="" connect_addrs="" first=""
  for i in $rails_used; do
    first="${first:-$i}"
    listen_addrs="${listen_addrs:+$listen_addrs,}10.77.$i.2"
    connect_addrs="${connect_addrs:+$connect_addrs,}10.77.$i.1"
  done
  PORT=$((PORT + 1))
  timeout "$RUN_TIMEOUT" ip netns exec rdmaflux-b java $JVM_FLAGS -cp "$CP" io.rdmaflux.samples.Main pipeline \
    --listen "10.77.$first.2:$PORT" --addresses "$listen_addrs" --timeout-s $((RUN_TIMEOUT - 10)) --no-progress \
    --report-dir "$WORK" ${PIPELINE_ARGS[@]+"${PIPELINE_ARGS[@]}"} >"$log.receiver" 2>&1 &
  RECEIVER_PID=$!
  local waited=0
  until grep -q "listening at" "$log.receiver" 2>/dev/null; do
    kill -0 "$RECEIVER_PID" 2>/dev/null || { echo "striping-netns-bench: receiver exited early:" >&2; cat "$log.receiver" >&2; return 1; }
    [ "$waited" -lt 300 ] || { echo "striping-netns-bench: receiver not listening after 30 s" >&2; return 1; }
    sleep 0.1; waited=$((waited + 1))
  done
  local rc=0
  ip netns exec rdmaflux-a bash -c "$SAMPLE_WIRE" >"$log.wire" 2>/dev/null &
  SAMPLER_PID=$!
  timeout "$RUN_TIMEOUT" ip netns exec rdmaflux-a java $JVM_FLAGS -cp "$CP" io.rdmaflux.samples.Main pipeline \
    --connect "10.77.$first.2:$PORT" --addresses "$connect_addrs" --policy "$policy" --limit-mib "$MIB" \
    --timeout-s $((RUN_TIMEOUT - 10)) --no-progress --report-dir "$WORK" ${PIPELINE_ARGS[@]+"${PIPELINE_ARGS[@]}"} \
    "$WORK/input.bin" >"$log.sender" 2>&1 || rc=$?
  wait "$RECEIVER_PID" || true
  RECEIVER_PID=""
  kill "$SAMPLER_PID" 2>/dev/null || true
  wait "$SAMPLER_PID" 2>/dev/null || true
  SAMPLER_PID=""
  if [ "$rc" != 0 ] || ! grep -q "OK, verified by the receiver" "$log.sender"; then
    echo "striping-netns-bench: $log failed (exit $rc, 124 = timeout of ${RUN_TIMEOUT}s):" >&2
    tail -5 "$log.sender" >&2
    return 1
  fi
  MIBPS="$(awk '$1 == "throughput" { print $2 }' "$log.sender")"
  STEADY="$(wire_rate "$log.wire" "$((MIB << 20))")"
}

# rails <label> <rates> <policies...>: plain TCP and each rail alone first (the references), then each policy
rails() {
  local label="$1" rates="$2"; shift 2
  local r1 r2 links alone=0 alone_steady=0 tcp=0
  IFS=, read -r r1 r2 <<< "$rates"
  links="$(awk -v a="$(mbit "$r1")" -v b="$(mbit "$r2")" 'BEGIN { if (a == "bad" || b == "bad") print "bad"; else printf "%.1f", (a + b) * 1e6 / 8 / 1048576 }')"
  [ "$links" != bad ] || { echo "striping-netns-bench: rates must look like 400mbit or 1gbit but were '$rates'" >&2; exit 2; }
  "$ROOT/scripts/netns-rails.sh" up --rails 2 --rates "$rates" >/dev/null
  for i in 1 2; do
    tcp_reference "$i" "$label"
    tcp="$(awk -v a="$tcp" -v m="$TCP_MIBPS" 'BEGIN { printf "%.2f", a + m }')"
    row "$label" "$rates" "tcp rail $i" "" "$TCP_MIBPS" "$links" "" "" "" ""
  done
  for i in 1 2; do
    transfer "$WORK/$label-rail$i" rr "$i"
    alone="$(awk -v a="$alone" -v m="$MIBPS" 'BEGIN { printf "%.1f", a + m }')"
    alone_steady="$(awk -v a="$alone_steady" -v m="$STEADY" 'BEGIN { printf "%.1f", a + m }')"
    row "$label" "$rates" "rail $i alone" "$MIBPS" "$STEADY" "$links" "" "" "" ""
  done
  for policy in "$@"; do
    transfer "$WORK/$label-${policy//[:,]/_}" "$policy" "1 2"
    row "$label" "$rates" "$policy" "$MIBPS" "$STEADY" "$links" \
      "$(ratio "$MIBPS" "$links")" "$(ratio "$STEADY" "$tcp")" "$(ratio "$MIBPS" "$alone")" "$(ratio "$STEADY" "$alone_steady")"
  done
  "$ROOT/scripts/netns-rails.sh" down >/dev/null
}

ratio() {
  awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.3f", a / b; else print "-" }'
}

# row <label> <rates> <what> <MiB/s> <steady> <links> <whole/links> <steady/tcp> <whole/alone> <steady/alone>
row() {
  printf '| %-6s %-16s | %-13s | %6s | %6s | %6s | %7s | %7s | %7s | %7s |\n' "$1" "$2" "$3" "$4" "$5" "$6" "$7" "$8" "$9" "${10}"
}

echo "striping-netns-bench: $MIB MiB per run, pipeline ${PIPELINE_ARGS[*]}, two processes in rdmaflux-a -> rdmaflux-b, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| rails (tbf)             | policy        | MiB/s  | steady | links  | / links | / tcp   | / alone | / alone steady |"
echo "|---|---|---|---|---|---|---|---|---|"
exec 9>/tmp/rdmaflux-bench.lock
flock -w "$LOCK_WAIT" 9 || skip "the benchmark lock /tmp/rdmaflux-bench.lock stayed taken for ${LOCK_WAIT}s"
rails "4:1" "$RATES" adaptive even weighted:4,1
rails "equal" "$EQUAL_RATES" adaptive even
echo "striping-netns-bench: MiB/s = the sender's whole run (connect to verdict); steady = payload MiB/s over the middle 80 % of the"
echo "  wire bytes; tcp rows = plain TCP on that rail alone; / links = MiB/s over the sum of the tbf rates; / tcp = steady over the"
echo "  sum of the tcp rows; / alone = MiB/s over the sum of the rails alone; / alone steady = the same for steady. Load average after $(cut -d' ' -f1-3 /proc/loadavg)"
