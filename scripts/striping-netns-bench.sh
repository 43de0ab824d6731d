#!/usr/bin/env bash
# Striping over two real processes in two network namespaces (issue 5, "the same on the
# two-namespace, two-veth harness"): adaptive, even and static-weights striping over tbf-shaped
# veth rails with the soft provider's IP fabric, each figure a ratio to the links' aggregate rate.
#
#   scripts/striping-netns-bench.sh [--mib N] [--rates 400mbit,100mbit] [--equal-rates 250mbit,250mbit]
#                                   [--parts bw,latency,reconvergence] [--lat-sizes 1m,4m]
#                                   [--lat-iterations 30] [--lat-warmup 20] [--rc-in-flight 16,8]
#                                   [-- pipeline options for both ends; default --chunk-kib 1024]
#
# Three parts (--parts picks some; default all three, in this order):
#   bw             bandwidth of each policy against the links (below);
#   latency        large-message latency on the equal rails: `rdmaflux bench latency` (ping-pong,
#                  one-way = RTT / 2) of --lat-sizes over rail 1 alone, then striped over both
#                  rails (even, adaptive; both ends stripe what they send with the same --policy),
#                  p50 striped / p50 one rail per size (seed 000 §6.2: about 0.5), with each rail's
#                  share of the bytes host A sent (the connector's per-size "# rails:" line) and of
#                  the veth bytes both ways (tx counters before and after), proving both rails carry
#                  each direction;
#   reconvergence  re-convergence after a capacity change on the equal rails: an adaptive pipeline
#                  transfer (sized from the rates to last about RC_PRE + RC_HOLD + RC_POST s) during
#                  which rail 1's egress in host A (tbf on rfa1, same burst and latency as
#                  netns-rails.sh) drops to a quarter RC_PRE s after the bytes start flowing, and is
#                  restored RC_HOLD s later. From host A's veth tx counters (every 50 ms) it reports,
#                  per change, how long until the aggregate payload rate (each ~100 ms window, wire
#                  bytes x the run's payload/wire ratio) is >= 0.95 of the new capacity (the tbf rates
#                  x 0.956, what plain TCP carries, see below) and stays there for 0.5 s (target
#                  <= 0.5 s), the lowest 100 ms rate on the way, the rates per 100 ms for 1.5 s,
#                  rail 1's share of the bytes and the steady rates of each phase (the last 1 s
#                  before each change, 1-2 s after the restore), the sender's adaptive weights
#                  (pipeline --weights-out, every 20 ms) after the change and how long until rail 1's
#                  weight is within 0.05 of its new capacity share for 0.5 s, rfa1's tbf drops and
#                  host A's TCP retransmissions per phase (the tc change must not be what slows a
#                  rail), and the TCP Send-Q of rail 1's sockets in host A just after the throttle
#                  (bytes already committed to that rail).
#                  One run per --rc-in-flight value (pipeline --in-flight on both ends; default 16, the
#                  pipeline's default and the bw runs', then 8): every 1 MiB message in flight has a
#                  stripe on rail 1, and the receiver delivers (and frees buffers) in PSN order, so what
#                  is already queued on rail 1 when it slows down holds the window until it drains.
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
# Uses samples/target/rdmaflux-samples.jar as built (./rdmaflux --help builds it, or in a worktree:
# mvn -B -o -q -DskipTests -pl samples -am package), or STRIPING_JAR
# (e.g. a copy in /tmp while others rebuild); put extra classes first with STRIPING_EXTRA_CP (e.g.
# rail-striping/target/classes to try an unreleased policy).
# Holds /tmp/rdmaflux-bench.lock while measuring (benchmarks share 2 cores) and
# /tmp/rdmaflux-netns.lock around the namespaces (each waited for at most 120 s). Every java
# process runs under `timeout` (90 s), a receiver must listen within 30 s, so the 9 bandwidth runs,
# 4 TCP references, 3 latency runs and 2 re-convergence runs end within about 40 minutes whatever
# hangs (about 2.5 minutes when all is well at 128 MiB: bw 1, latency 0.8, re-convergence 0.5, on
# the shared 2-core machine at load 1-4; bw about 4 times longer at 512 MiB); the namespaces are
# always torn down (trap), the random input files deleted, the logs kept (the last line names the
# directory). Not root, no namespaces, no jar, or namespaces busy with someone else's processes:
# prints "striping netns bench skipped: <why>" and exits 0.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
MIB=128
RATES=400mbit,100mbit
EQUAL_RATES=250mbit,250mbit
RUN_TIMEOUT=90
LOCK_WAIT=120
PARTS=bw,latency,reconvergence
LAT_SIZES=1m,4m
LAT_ITERATIONS=30
LAT_WARMUP=20
# re-convergence phases, s: full rate after the bytes start flowing, rail 1 at a quarter, full again
RC_PRE=2.5
RC_HOLD=3
RC_POST=2.5
RC_IN_FLIGHT=16,8
# the issue's figures are for 1 MiB messages (as the in-JVM benchmark); the pipeline's own default
# chunk is 256 KiB. Any "-- options" replace this default.
PIPELINE_ARGS=(--chunk-kib 1024)
while [ $# -gt 0 ]; do
  case "$1" in
    --mib) MIB="${2:?--mib needs a number}"; shift 2 ;;
    --rates) RATES="${2:?--rates needs r1,r2}"; shift 2 ;;
    --equal-rates) EQUAL_RATES="${2:?--equal-rates needs r1,r2}"; shift 2 ;;
    --parts) PARTS="${2:?--parts needs a list like bw,latency,reconvergence}"; shift 2 ;;
    --lat-sizes) LAT_SIZES="${2:?--lat-sizes needs a list like 1m,4m}"; shift 2 ;;
    --lat-iterations) LAT_ITERATIONS="${2:?--lat-iterations needs a number}"; shift 2 ;;
    --lat-warmup) LAT_WARMUP="${2:?--lat-warmup needs a number}"; shift 2 ;;
    --rc-in-flight) RC_IN_FLIGHT="${2:?--rc-in-flight needs a list like 16,8}"; shift 2 ;;
    --) shift; PIPELINE_ARGS=("$@"); break ;;
    *) echo "usage: $0 [--mib N] [--rates r1,r2] [--equal-rates r1,r2] [--parts bw,latency,reconvergence] [--lat-sizes 1m,4m]" \
         "[--lat-iterations N] [--lat-warmup N] [--rc-in-flight 16,8] [-- pipeline options for both ends]" >&2; exit 2 ;;
  esac
done
[[ "$MIB" =~ ^[1-9][0-9]{0,3}$ ]] || { echo "striping-netns-bench: --mib must be 1..9999 but it was '$MIB'" >&2; exit 2; }
[[ "$LAT_ITERATIONS" =~ ^[1-9][0-9]{0,4}$ ]] || { echo "striping-netns-bench: --lat-iterations must be 1..99999 but it was '$LAT_ITERATIONS'" >&2; exit 2; }
[[ "$LAT_WARMUP" =~ ^[0-9]{1,5}$ ]] || { echo "striping-netns-bench: --lat-warmup must be 0..99999 but it was '$LAT_WARMUP'" >&2; exit 2; }
[[ "$LAT_SIZES" =~ ^[0-9]+[km]?(,[0-9]+[km]?)*$ ]] || { echo "striping-netns-bench: --lat-sizes must be a list like 1m,4m but it was '$LAT_SIZES'" >&2; exit 2; }
[[ "$RC_IN_FLIGHT" =~ ^[1-9][0-9]?(,[1-9][0-9]?)*$ ]] || { echo "striping-netns-bench: --rc-in-flight must be a list of 1..64 like 16,8 but it was '$RC_IN_FLIGHT'" >&2; exit 2; }
for part in ${PARTS//,/ }; do
  case "$part" in
    bw|latency|reconvergence) ;;
    *) echo "striping-netns-bench: --parts has '$part'; choose from bw, latency, reconvergence (comma-separated)" >&2; exit 2 ;;
  esac
done
want() { [[ ",$PARTS," == *",$1,"* ]]; }
if want reconvergence && [[ " ${PIPELINE_ARGS[*]} " == *" --in-flight "* ]]; then
  echo "striping-netns-bench: give the re-convergence runs' --in-flight with --rc-in-flight, not after --" >&2; exit 2
fi

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
SENDER_PID=""
cleanup() {
  local rc=$?
  if [ -n "$SAMPLER_PID" ]; then
    kill "$SAMPLER_PID" 2>/dev/null || true
  fi
  if [ -n "$SENDER_PID" ]; then
    kill "$SENDER_PID" 2>/dev/null || true
    wait "$SENDER_PID" 2>/dev/null || true
  fi
  if [ -n "$RECEIVER_PID" ]; then
    kill "$RECEIVER_PID" 2>/dev/null || true
    wait "$RECEIVER_PID" 2>/dev/null || true
  fi
  "$ROOT/scripts/netns-rails.sh" down >/dev/null 2>&1 || true
  # the logs stay for a look afterwards; the inputs (hundreds of MiB in /tmp) go
  rm -rf "$WORK/input.bin" "$WORK/reconvergence-input"
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

# await_listening <log> <pid>: until the side started in the background prints "listening at" (30 s at most)
await_listening() {
  local waited=0
  until grep -q "listening at" "$1" 2>/dev/null; do
    kill -0 "$2" 2>/dev/null || { echo "striping-netns-bench: $(basename "$1") exited before listening:" >&2; cat "$1" >&2; return 1; }
    [ "$waited" -lt 300 ] || { echo "striping-netns-bench: $(basename "$1") not listening after 30 s" >&2; return 1; }
    sleep 0.1; waited=$((waited + 1))
  done
}

# counters <namespace> <veth prefix rfa|rfb>: "tx1 tx2", the tx byte counters of that host's rail veths
counters() {
  ip netns exec "$1" cat "/sys/class/net/${2}1/statistics/tx_bytes" "/sys/class/net/${2}2/statistics/tx_bytes" | tr '\n' ' '
}

# addrs <rail numbers, e.g. "1 2">: sets LISTEN_ADDRS (host B), CONNECT_ADDRS (host A) and FIRST
addrs() {
  LISTEN_ADDRS=""; CONNECT_ADDRS=""; FIRST=""
  for i in $1; do
    FIRST="${FIRST:-$i}"
    LISTEN_ADDRS="${LISTEN_ADDRS:+$LISTEN_ADDRS,}10.77.$i.2"
    CONNECT_ADDRS="${CONNECT_ADDRS:+$CONNECT_ADDRS,}10.77.$i.1"
  done
}

# latency_run <log> <policy> <rail numbers>: `bench latency` of $LAT_SIZES, host A (--connect, measures)
# <-> host B (--listen, echoes), both ends with <policy>; the connector's table is in <log>.connector,
# and LAT_WIRE holds the veth tx bytes of the run: "A-rail1 A-rail2 B-rail1 B-rail2"
latency_run() {
  local log="$1" policy="$2" rc=0 a0 b0 a1 b1
  addrs "$3"
  PORT=$((PORT + 1))
  timeout "$RUN_TIMEOUT" ip netns exec rdmaflux-b java $JVM_FLAGS -cp "$CP" io.rdmaflux.samples.Main bench latency \
    --listen "10.77.$FIRST.2:$PORT" --addresses "$LISTEN_ADDRS" --sizes "$LAT_SIZES" --policy "$policy" \
    --timeout-s $((RUN_TIMEOUT - 10)) >"$log.listener" 2>&1 &
  RECEIVER_PID=$!
  await_listening "$log.listener" "$RECEIVER_PID"
  a0="$(counters rdmaflux-a rfa)"; b0="$(counters rdmaflux-b rfb)"
  timeout "$RUN_TIMEOUT" ip netns exec rdmaflux-a java $JVM_FLAGS -cp "$CP" io.rdmaflux.samples.Main bench latency \
    --connect "10.77.$FIRST.2:$PORT" --addresses "$CONNECT_ADDRS" --sizes "$LAT_SIZES" --policy "$policy" \
    --iterations "$LAT_ITERATIONS" --warmup "$LAT_WARMUP" --timeout-s $((RUN_TIMEOUT - 10)) >"$log.connector" 2>&1 || rc=$?
  wait "$RECEIVER_PID" || true
  RECEIVER_PID=""
  a1="$(counters rdmaflux-a rfa)"; b1="$(counters rdmaflux-b rfb)"
  if [ "$rc" != 0 ]; then
    echo "striping-netns-bench: $log failed (exit $rc, 124 = timeout of ${RUN_TIMEOUT}s):" >&2
    tail -5 "$log.connector" >&2
    return 1
  fi
  LAT_WIRE="$(echo "$a0 $b0 $a1 $b1" | awk '{ printf "%d %d %d %d", $5 - $1, $6 - $2, $7 - $3, $8 - $4 }')"
}

# two shares of two byte counts: "50.1 % / 49.9 % of 12.3 MiB"
shares() {
  awk -v x="$1" -v y="$2" 'BEGIN { s = x + y; if (s <= 0) { print "-"; exit }
    printf "%.1f %% / %.1f %% of %.0f MiB", 100 * x / s, 100 * y / s, s / 1048576 }'
}

# latency <rates>: rail 1 alone (round robin on one rail), then even and adaptive striping over both rails
latency() {
  local rates="$1" policy used size mean p50 p99 sent ratio
  declare -A one=()
  "$ROOT/scripts/netns-rails.sh" up --rails 2 --rates "$rates" >/dev/null
  echo
  echo "striping-netns-bench latency: bench latency --sizes $LAT_SIZES, $LAT_ITERATIONS ping-pongs per size after $LAT_WARMUP warm-up ones," \
    "one-way = RTT / 2 in ms, tbf $rates, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "| rails | policy | size | p50 ms | mean ms | p99 ms | p50 / one rail | host A sent, rail 1 / 2 | veth A->B, rail 1 / 2 | veth B->A, rail 1 / 2 |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  for c in "rr:1" "even:1 2" "adaptive:1 2"; do
    policy="${c%%:*}"; used="${c#*:}"
    latency_run "$WORK/lat-$policy" "$policy" "$used"
    read -r wa1 wa2 wb1 wb2 <<< "$LAT_WIRE"
    # rows "size mean p50 p99" (us) and the "# rails: sent X % / Y % of ..." line after each
    while read -r size mean p50 p99 sent; do
      if [ "$used" = 1 ]; then
        one[$size]="$p50"; ratio=""; sent="(one rail)"
      else
        ratio="$(ratio "$p50" "${one[$size]:-0}")"
      fi
      printf '| %-5s | %-8s | %4s | %7s | %7s | %7s | %6s | %-22s | %-26s | %-26s |\n' "$( [ "$used" = 1 ] && echo "rail 1" || echo "1 + 2")" \
        "$( [ "$used" = 1 ] && echo "(alone)" || echo "$policy")" "$(awk -v b="$size" 'BEGIN { if (b >= 1048576) printf "%gm", b / 1048576; else printf "%gk", b / 1024 }')" \
        "$(awk -v u="$p50" 'BEGIN { printf "%.2f", u / 1000 }')" "$(awk -v u="$mean" 'BEGIN { printf "%.2f", u / 1000 }')" \
        "$(awk -v u="$p99" 'BEGIN { printf "%.2f", u / 1000 }')" "$ratio" "$sent" \
        "$(shares "$wa1" "$wa2")" "$(shares "$wb1" "$wb2")"
    done < <(awk '
      $1 ~ /^[0-9]+$/ && NF == 4 { if (row != "") print row, "-"; row = $1 " " $2 " " $3 " " $4; next }
      /^# rails: sent/ && row != "" { print row, $4 "%/" $7 "%"; row = "" }
      END { if (row != "") print row, "-" }' "$WORK/lat-$policy.connector")
  done
  "$ROOT/scripts/netns-rails.sh" down >/dev/null
  echo "striping-netns-bench latency: p50 / one rail = striped p50 over rail 1 alone's p50 at that size (seed 000 §6.2: about 0.5);"
  echo "  tbf lets 64 KiB per rail through at once after an idle gap, so pure serialization predicts (s/2 - 64 KiB) / (s - 64 KiB):"
  echo "  0.467 at 1 MiB, 0.492 at 4 MiB. host A sent = each rail's share of the payload host A sent during that size (its pings);"
  echo "  veth = each rail's share of all tx bytes in that direction during the run (host B's pongs for B->A)."
}

# drops_retrans: "<packets rfa1's tbf dropped> <TCP segments host A retransmitted>" so far (a tc change
# must not be what slows a rail down)
drops_retrans() {
  echo "$(tc -s -n rdmaflux-a qdisc show dev rfa1 | awk '/dropped/ { sub(/,/, "", $7); d += $7 } END { print d + 0 }')" \
    "$(ip netns exec rdmaflux-a awk '$1 == "Tcp:" && $13 ~ /^[0-9]+$/ { print $13 }' /proc/net/snmp)"
}

# reconvergence <rates> <in flight>: an adaptive pipeline transfer on <rates> with that many messages in
# flight, during which rail 1's egress in host A drops to a quarter and comes back (see the header)
reconvergence() {
  local rates="$1" r1 r2 m1 m2 q1 c_full c_thr o_thr o_full need links dir log="$WORK/reconvergence-if$2" rc=0
  local args=(${PIPELINE_ARGS[@]+"${PIPELINE_ARGS[@]}"} --in-flight "$2")
  IFS=, read -r r1 r2 <<< "$rates"
  m1="$(mbit "$r1")"; m2="$(mbit "$r2")"
  [ "$m1" != bad ] && [ "$m2" != bad ] || { echo "striping-netns-bench: rates must look like 250mbit but were '$rates'" >&2; exit 2; }
  q1="$(awk -v m="$m1" 'BEGIN { printf "%dkbit", m * 1000 / 4 }')"
  # capacities in payload MiB/s (tbf rate x 1448/1514, what plain TCP carries), rail 1's capacity
  # share throttled and not, and the MiB that last about 8 MiB + RC_PRE + RC_HOLD + RC_POST + 1 s (+ 15 %)
  read -r c_full c_thr o_thr o_full need < <(awk -v a="$m1" -v b="$m2" -v pre="$RC_PRE" -v hold="$RC_HOLD" -v post="$RC_POST" 'BEGIN {
    k = 1e6 / 8 / 1048576 * 1448 / 1514; full = (a + b) * k; thr = (a / 4 + b) * k
    printf "%.2f %.2f %.4f %.4f %d\n", full, thr, a / 4 / (a / 4 + b), a / (a + b), int((8 + (pre + post + 1) * full + hold * thr) * 1.15) + 1 }')
  # the input: hard links to the random file, as many as the size needs (no extra disk)
  dir="$WORK/reconvergence-input"; mkdir -p "$dir"
  links=$(( (need + MIB - 1) / MIB ))
  for k in $(seq 1 "$links"); do ln -f "$WORK/input.bin" "$dir/part-$(printf %03d "$k")"; done
  "$ROOT/scripts/netns-rails.sh" up --rails 2 --rates "$rates" >/dev/null
  addrs "1 2"
  PORT=$((PORT + 1))
  timeout "$RUN_TIMEOUT" ip netns exec rdmaflux-b java $JVM_FLAGS -cp "$CP" io.rdmaflux.samples.Main pipeline \
    --listen "10.77.1.2:$PORT" --addresses "$LISTEN_ADDRS" --timeout-s $((RUN_TIMEOUT - 10)) --no-progress \
    --report-dir "$WORK" "${args[@]}" >"$log.receiver" 2>&1 &
  RECEIVER_PID=$!
  await_listening "$log.receiver" "$RECEIVER_PID"
  ip netns exec rdmaflux-a bash -c "$SAMPLE_WIRE" >"$log.wire" 2>/dev/null &
  SAMPLER_PID=$!
  timeout "$RUN_TIMEOUT" ip netns exec rdmaflux-a java $JVM_FLAGS -cp "$CP" io.rdmaflux.samples.Main pipeline \
    --connect "10.77.1.2:$PORT" --addresses "$CONNECT_ADDRS" --policy adaptive --limit-mib "$need" --weights-out "$log.weights" \
    --timeout-s $((RUN_TIMEOUT - 10)) --no-progress --report-dir "$WORK" "${args[@]}" \
    "$dir" >"$log.sender" 2>&1 &
  SENDER_PID=$!
  # the phases start when 8 MiB crossed the rails (both JVMs up, the connection made; 60 s at most)
  local start waited=0 t_flow t1 t2 sendq
  until [ -s "$log.wire" ] || [ "$waited" -ge 200 ]; do sleep 0.05; waited=$((waited + 1)); done
  waited=0
  start="$(awk 'NR == 1 { print $2 + $3 }' "$log.wire")"
  until [ "$(tail -n 1 "$log.wire" | awk -v s="$start" '{ print ($2 + $3 - s >= 8388608) }')" = 1 ]; do
    kill -0 "$SENDER_PID" 2>/dev/null || break
    [ "$waited" -lt 1200 ] || break
    sleep 0.05; waited=$((waited + 1))
  done
  t_flow="$EPOCHREALTIME"
  sleep "$RC_PRE"
  local dr0 dr1 dr2
  dr0="$(drops_retrans)"
  t1="$EPOCHREALTIME"
  tc -n rdmaflux-a qdisc change dev rfa1 root tbf rate "$q1" burst 64kb latency 50ms
  # what rail 1 already holds in host A's TCP send queues (committed to it, drains at the new rate)
  sendq="$(ip netns exec rdmaflux-a ss -tnH state established src 10.77.1.1 2>/dev/null | awk '{ q += $2 } END { printf "%.2f", q / 1048576 }')"
  sleep "$RC_HOLD"
  dr1="$(drops_retrans)"
  t2="$EPOCHREALTIME"
  tc -n rdmaflux-a qdisc change dev rfa1 root tbf rate "$r1" burst 64kb latency 50ms
  echo "flow $t_flow throttle $t1 restore $t2 sendq_mib $sendq" >"$log.events"
  wait "$SENDER_PID" || rc=$?
  SENDER_PID=""
  wait "$RECEIVER_PID" || true
  RECEIVER_PID=""
  kill "$SAMPLER_PID" 2>/dev/null || true
  wait "$SAMPLER_PID" 2>/dev/null || true
  SAMPLER_PID=""
  dr2="$(drops_retrans)"
  "$ROOT/scripts/netns-rails.sh" down >/dev/null
  if [ "$rc" != 0 ] || ! grep -q "OK, verified by the receiver" "$log.sender"; then
    echo "striping-netns-bench: $log failed (exit $rc, 124 = timeout of ${RUN_TIMEOUT}s):" >&2
    tail -5 "$log.sender" >&2
    return 1
  fi
  echo
  echo "striping-netns-bench reconvergence: adaptive pipeline, $need MiB, ${args[*]}, tbf $rates; rail 1 (rfa1 in host A) to $q1" \
    "$(awk -v a="$t_flow" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s after 8 MiB crossed, back to $r1 $(awk -v a="$t1" -v b="$t2" 'BEGIN { printf "%.1f", b - a }') s later;" \
    "$(awk '$1 == "throughput" { print $2 " MiB/s whole run" }' "$log.sender"); load average $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "| change | capacity MiB/s | back to >= 0.95 for 0.5 s after | lowest 100 ms MiB/s | steady: rail 1 + rail 2 MiB/s (/ capacity) | rail 1 share of bytes | rail 1 weight: before, +0.1, +0.25, +0.5, +1 s | weight within 0.05 of the capacity share after |"
  echo "|---|---|---|---|---|---|---|---|"
  awk -v T1="$t1" -v T2="$t2" -v payload="$((need << 20))" -v cf="$c_full" -v ct="$c_thr" -v o1="$o_thr" -v o2="$o_full" \
      -v lab1="rail 1 $r1 -> $q1" -v lab2="rail 1 $q1 -> $r1" -v sendq="$sendq" -v wfile="$log.weights" -v dr="$dr0 $dr1 $dr2" '
    BEGIN { while ((getline line < wfile) > 0) if (split(line, p, " ") >= 3 && p[1] !~ /^#/) { wn++; wt[wn] = p[1] + 0; wv[wn] = p[2] + 0 } }
    NF == 3 { n++; t[n] = $1; a[n] = $2; b[n] = $3; w[n] = $2 + $3 }
    function first(T,   i) { for (i = 1; i <= n; i++) if (t[i] >= T) return i; return n }
    # payload MiB/s over the ~100 ms from sample i (-1 past the end)
    function rate(i,   j) {
      for (j = i + 1; j <= n && t[j] - t[i] < 0.095; j++) ;
      if (j > n) return -1
      return (w[j] - w[i]) / (t[j] - t[i]) * f / 1048576 }
    # counter arr interpolated at time T
    function at(arr, T,   i, x) {
      if (T <= t[1]) return arr[1]
      for (i = 2; i <= n; i++) if (t[i] >= T) { x = (T - t[i - 1]) / (t[i] - t[i - 1]); return arr[i - 1] + x * (arr[i] - arr[i - 1]) }
      return arr[n] }
    function mrate(arr, T0, T9) { return (at(arr, T9) - at(arr, T0)) / (T9 - T0) * f / 1048576 }
    # seconds from T until every 100 ms window starting in the next 0.5 s is >= 0.95 c (windows end before E); -1: never
    function back(T, E, c,   i, k, r, ok) {
      for (i = first(T); i <= n && t[i] + 0.6 <= E; i++) {
        ok = 1
        for (k = i; k <= n && t[k] <= t[i] + 0.5; k++) { r = rate(k); if (r < 0.95 * c) { ok = 0; break } }
        if (ok) return t[i] - T }
      return -1 }
    function lowest(T, D,   i, r, m) {
      m = -1
      for (i = first(T); i <= n && t[i] <= T + D; i++) { r = rate(i); if (r >= 0 && (m < 0 || r < m)) m = r }
      return m }
    function wat(T,   i, v) { v = -1; for (i = 1; i <= wn && wt[i] <= T; i++) v = wv[i]; return v }
    function wfmt(T,   v) { v = wat(T); return v < 0 ? "-" : sprintf("%.2f", v) }
    # seconds from T until rail 1 weight stays within 0.05 of o for 0.5 s (before E); -1: never
    function wback(T, E, o,   i, k, ok) {
      for (i = 1; i <= wn; i++) {
        if (wt[i] < T) continue
        if (wt[i] + 0.5 > E) break
        ok = 1
        for (k = i; k <= wn && wt[k] <= wt[i] + 0.5; k++) if (wv[k] - o > 0.05 || o - wv[k] > 0.05) { ok = 0; break }
        if (ok) return wt[i] - T }
      return -1 }
    # payload MiB/s in the consecutive 100 ms windows of the 1.5 s from T, rail 1 + rail 2
    function timeline(lab, T,   k, r1, r2, out) {
      out = ""
      for (k = 0; k < 15; k++) {
        r1 = mrate(a, T + k / 10, T + (k + 1) / 10); r2 = mrate(b, T + k / 10, T + (k + 1) / 10)
        out = out sprintf(" %.0f+%.0f", r1, r2) }
      printf "  %s, per 100 ms from the change (rail 1 + rail 2 MiB/s):%s\n", lab, out }
    function secs(x, E, T) { return x >= 0 ? sprintf("**%.2f s**", x) : sprintf("not within the phase (%.1f s)", E - T) }
    # one change at T, its phase ending at E, steady rates over [S0, S1]
    function row(lab, c0, c, T, E, o, S0, S1,   x, lo, r1, r2) {
      x = back(T, E, c)
      lo = lowest(T, (x >= 0 ? x : E - T) + 0.1)
      r1 = mrate(a, S0, S1); r2 = mrate(b, S0, S1)
      printf "| %s | %.1f -> %.1f | %s | %.1f | %.1f + %.1f = %.1f (%.3f) | %.2f | %s, %s, %s, %s, %s | %s |\n", lab, c0, c, secs(x, E, T), lo,
        r1, r2, r1 + r2, (r1 + r2) / c, r1 / (r1 + r2), wfmt(T), wfmt(T + 0.1), wfmt(T + 0.25), wfmt(T + 0.5), wfmt(T + 1),
        (wn ? secs(wback(T, E, o), E, T) : "-") }
    END {
      total = w[n] - w[1]
      if (n < 10 || total <= 0) { print "striping-netns-bench reconvergence: no wire samples"; exit }
      f = payload / total
      for (i = 1; i <= n && w[i] - w[1] < 0.98 * total; i++) ;
      E = t[i > n ? n : i]
      r1 = mrate(a, T1 - 1, T1); r2 = mrate(b, T1 - 1, T1)
      printf "| before (last 1 s) | %.1f | | | %.1f + %.1f = %.1f (%.3f) | %.2f | %s | |\n", cf, r1, r2, r1 + r2, (r1 + r2) / cf, r1 / (r1 + r2), wfmt(T1)
      row(lab1, cf, ct, T1, T2, o1, T2 - 1, T2)
      row(lab2, ct, cf, T2, E, o2, T2 + 1, (E < T2 + 2 ? E : T2 + 2))
      printf "striping-netns-bench reconvergence: target <= 0.5 s; capacity = tbf rates x 1448/1514; rates = host A veth tx x the run'"'"'s payload/wire %.3f;\n", f
      printf "  steady = the last 1 s before the throttle, the last 1 s of the throttled phase, 1-2 s after the restore;\n"
      timeline("throttle", T1)
      timeline("restore", T2)
      split(dr, d, " ")
      printf "  rail 1 tbf drops / host A TCP retransmitted segments: %d / %d before the throttle, %d / %d while throttled, %d / %d after the restore\n",
        d[1], d[2], d[3] - d[1], d[4] - d[2], d[5] - d[3], d[6] - d[4]
      printf "  capacity shares of rail 1: %.2f throttled, %.2f restored; rail 1 TCP Send-Q in host A just after the throttle: %s MiB\n", o1, o2, sendq
      printf "  (%.2f s of rail 1 at the throttled rate); the restored phase ends when 98 %% of the wire bytes had crossed (%.1f s after the restore)\n",
        sendq / (o1 * ct), E - T2 }' "$log.wire"
}

echo "striping-netns-bench: $MIB MiB per run, pipeline ${PIPELINE_ARGS[*]}, two processes in rdmaflux-a -> rdmaflux-b, parts $PARTS, load average $(cut -d' ' -f1-3 /proc/loadavg)"
exec 9>/tmp/rdmaflux-bench.lock
flock -w "$LOCK_WAIT" 9 || skip "the benchmark lock /tmp/rdmaflux-bench.lock stayed taken for ${LOCK_WAIT}s"
if want bw; then
  echo "| rails (tbf)             | policy        | MiB/s  | steady | links  | / links | / tcp   | / alone | / alone steady |"
  echo "|---|---|---|---|---|---|---|---|---|"
  rails "4:1" "$RATES" adaptive even weighted:4,1
  rails "equal" "$EQUAL_RATES" adaptive even
  echo "striping-netns-bench: MiB/s = the sender's whole run (connect to verdict); steady = payload MiB/s over the middle 80 % of the"
  echo "  wire bytes; tcp rows = plain TCP on that rail alone; / links = MiB/s over the sum of the tbf rates; / tcp = steady over the"
  echo "  sum of the tcp rows; / alone = MiB/s over the sum of the rails alone; / alone steady = the same for steady. Load average after $(cut -d' ' -f1-3 /proc/loadavg)"
fi
if want latency; then
  latency "$EQUAL_RATES"
fi
if want reconvergence; then
  for n in ${RC_IN_FLIGHT//,/ }; do
    reconvergence "$EQUAL_RATES" "$n"
  done
fi
echo "striping-netns-bench: done, load average $(cut -d' ' -f1-3 /proc/loadavg); logs in $WORK"
