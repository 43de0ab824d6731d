#!/usr/bin/env bash
# Soak: two processes stream verified messages over 2 rails for N minutes, with a random rail flap per
# connection epoch and RC frame loss in the soft NIC, each sampling its heap (after System.gc()),
# registered off-heap bytes, buffers held, threads and open fds every second.
#
#   scripts/soak.sh [--minutes N] [--netns] [-- extra 'rdmaflux soak' options, e.g. --epoch-s 20 --rc-loss 0.02]
#
# Passes (exit 0) when both processes pass: every message's CRC32C and sequence number checked by the
# receiver, and no sample series rising (least-squares rise over the run's second half > max(10 % of
# the half's mean, a per-series floor); see samples' TrendTest). Fails with exit 1 otherwise; the
# sample CSVs and both logs stay in the printed directory (soak-sender.csv, soak-receiver.csv).
#
# Where the run happens:
#   default  loopback: both processes on 127.0.0.1, one TCP stream per rail and QP. The rail flaps and the
#            loss are the soft NIC's (the port DOWN drops every frame; RailConfig.rcLossRate drops RC frames
#            and the soft requester retransmits): the kernel's loopback cannot be flapped per rail.
#   --netns  (root, iproute2) the two processes in network namespaces rdmaflux-a/-b joined by two veth
#            rails (scripts/netns-rails.sh); the same soft-NIC flaps and loss. Kernel-level faults are not
#            added: iptables loss in netns-rails.sh drops UDP only (RC runs over TCP, which would just
#            retransmit), and a veth taken down mid-stream is left for later (it would need coordinating
#            with the soak's one-flap-per-epoch rule, since a connection does not take a failed rail back).
#            Without root or netns support it says so and runs on loopback.
#
# Uses samples/target/rdmaflux-samples.jar, building it (mvn -o package, never install) when any source
# is newer; SOAK_JAR=path runs another copy of the jar (e.g. while rebuilding).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
MINUTES=1
NETNS=0
EXTRA=()
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) MINUTES="${2:?--minutes needs a number}"; shift 2 ;;
    --netns) NETNS=1; shift ;;
    --) shift; EXTRA=("$@"); break ;;
    *) echo "usage: $0 [--minutes N] [--netns] [-- rdmaflux soak options]" >&2; exit 2 ;;
  esac
done
awk -v m="$MINUTES" 'BEGIN { exit !(m > 0 && m <= 10080) }' || { echo "soak: --minutes must be in (0, 10080] but it was '$MINUTES'" >&2; exit 2; }

JAR="${SOAK_JAR:-$ROOT/samples/target/rdmaflux-samples.jar}"
if [ -z "${SOAK_JAR:-}" ] && { [ ! -f "$JAR" ] || [ -n "$(find "$ROOT" -path '*/target' -prune -o \( -name '*.java' -o -name '*.kt' -o -name pom.xml \) -newer "$JAR" -print -quit)" ]; }; then
  echo "soak: building the samples jar (mvn -o package)" >&2
  (cd "$ROOT" && mvn -B -o -q -DskipTests -pl samples -am package) >&2
fi
[ -f "$JAR" ] || { echo "soak: no jar at $JAR" >&2; exit 1; }
JVM_FLAGS="$(cat "$ROOT/.mvn/jvm-flags")"
LOG_DIR="$(mktemp -d /tmp/rdmaflux-soak.XXXXXX)"
SECONDS_RUN="$(awk -v m="$MINUTES" 'BEGIN { printf "%d", m * 60 }')"
HARD_TIMEOUT=$((SECONDS_RUN + 300))

RUN_A=(); RUN_B=()
LISTEN=127.0.0.1:0; ADDR_A=127.0.0.1,127.0.0.1; ADDR_B=127.0.0.1,127.0.0.1
if [ "$NETNS" = 1 ]; then
  why=""
  if [ "$(id -u)" != 0 ]; then why="not root"
  elif ! command -v ip >/dev/null 2>&1; then why="no iproute2"
  elif ! ip netns add rdmaflux-soak-probe 2>/dev/null; then why="'ip netns add' does not work here"
  else ip netns del rdmaflux-soak-probe; fi
  if [ -n "$why" ]; then
    echo "soak: --netns unavailable ($why); running on loopback" >&2
    NETNS=0
  fi
fi
cleanup() {
  local rc=$?
  [ -n "${RECEIVER_PID:-}" ] && kill "$RECEIVER_PID" 2>/dev/null || true
  [ "$NETNS" = 1 ] && "$ROOT/scripts/netns-rails.sh" down >/dev/null 2>&1 || true
  exit $rc
}
trap cleanup EXIT INT TERM
if [ "$NETNS" = 1 ]; then
  if command -v flock >/dev/null 2>&1; then
    exec 8>/tmp/rdmaflux-netns.lock
    flock -w 300 8 || { echo "soak: /tmp/rdmaflux-netns.lock stayed taken for 300 s" >&2; exit 1; }
  fi
  "$ROOT/scripts/netns-rails.sh" up --rails 2
  RUN_A=(ip netns exec rdmaflux-a); RUN_B=(ip netns exec rdmaflux-b)
  LISTEN=10.77.1.2:7490; ADDR_A=10.77.1.1,10.77.2.1; ADDR_B=10.77.1.2,10.77.2.2
fi

echo "soak: $MINUTES min, $([ "$NETNS" = 1 ] && echo "namespaces rdmaflux-a -> rdmaflux-b" || echo loopback), logs and CSVs in $LOG_DIR; load: $(cut -d' ' -f1-3 /proc/loadavg)"
# shellcheck disable=SC2086
timeout "$HARD_TIMEOUT" "${RUN_B[@]}" java $JVM_FLAGS -jar "$JAR" soak --listen "$LISTEN" --addresses "$ADDR_B" --minutes "$MINUTES" \
  --report-dir "$LOG_DIR" "${EXTRA[@]}" >"$LOG_DIR/receiver.log" 2>&1 &
RECEIVER_PID=$!
AT=""
for _ in $(seq 1 600); do
  AT="$(grep -o 'listening at [^;]*' "$LOG_DIR/receiver.log" 2>/dev/null | head -1 | sed 's/listening at //')" || true
  [ -n "$AT" ] && break
  kill -0 "$RECEIVER_PID" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$AT" ]; then
  cat "$LOG_DIR/receiver.log" >&2
  echo "soak: the receiver did not start listening" >&2
  exit 1
fi
SENDER_RC=0
# shellcheck disable=SC2086
timeout "$HARD_TIMEOUT" "${RUN_A[@]}" java $JVM_FLAGS -jar "$JAR" soak --connect "$AT" --addresses "$ADDR_A" --minutes "$MINUTES" \
  --report-dir "$LOG_DIR" "${EXTRA[@]}" >"$LOG_DIR/sender.log" 2>&1 || SENDER_RC=$?
RECEIVER_RC=0
wait "$RECEIVER_PID" || RECEIVER_RC=$?
RECEIVER_PID=""
sed 's/^/  receiver | /' "$LOG_DIR/receiver.log"
sed 's/^/  sender   | /' "$LOG_DIR/sender.log"
echo "soak: load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "$SENDER_RC" = 0 ] && [ "$RECEIVER_RC" = 0 ]; then
  echo "soak passed ($MINUTES min; samples in $LOG_DIR)"
  exit 0
fi
echo "soak FAILED: sender exit $SENDER_RC, receiver exit $RECEIVER_RC (3 = a byte wrong or a series rising, 124 = hard timeout); logs in $LOG_DIR" >&2
exit 1
