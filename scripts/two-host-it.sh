#!/usr/bin/env bash
# Two-host, two-rail integration run of the soft provider's IP fabric.
#
#   scripts/two-host-it.sh [--rates 800mbit,200mbit] [--bytes-per-rail 16777216] [--loss p]
#
# Builds the verbs module and its tests (running the in-JVM loopback version of the pair, which
# also yields the test classpath), brings up two network namespaces joined by two veth rails with
# tc tbf rates (scripts/netns-rails.sh), runs io.rdmaflux.verbs.soft.net.it.TwoRailReceiver in
# host B and TwoRailSender in host A (JVM flags from .mvn/jvm-flags), and passes when both exit 0
# within a hard timeout. The sender also checks that no rail ran faster than its tbf rate, so each
# rail's data really took that rail. Each rail also carries 256 UD datagrams of 2 KiB (IP
# fragments on the veth MTU), every one that arrives checked byte-exact, nearly all required.
# The namespaces are always torn down (trap).
# --loss p drops that fraction of UDP datagrams in host B (needs iptables); RC runs over TCP and
# must still deliver everything, UD must deliver at least (1-p)^2 - 0.1 of its datagrams.
# Without --loss, iptables is not needed.
# Not root, or 'ip netns' unusable: prints "two-host integration skipped: <why>" and exits 0.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
RATES=800mbit,200mbit
BYTES=$((16 << 20))
LOSS=""
HARD_TIMEOUT=120
while [ $# -gt 0 ]; do
  case "$1" in
    --rates) RATES="$2"; shift 2 ;;
    --bytes-per-rail) BYTES="$2"; shift 2 ;;
    --loss) LOSS="$2"; shift 2 ;;
    *) echo "usage: $0 [--rates r1,r2] [--bytes-per-rail N] [--loss p]" >&2; exit 2 ;;
  esac
done

skip() { echo "two-host integration skipped: $*"; exit 0; }
[ "$(id -u)" = 0 ] || skip "not root (ip netns needs CAP_SYS_ADMIN)"
command -v ip >/dev/null 2>&1 || skip "'ip' (iproute2) is not installed"
command -v tc >/dev/null 2>&1 || skip "'tc' is not installed (needed for rail rates)"
command -v timeout >/dev/null 2>&1 || skip "'timeout' (coreutils) is not installed"
if ! ip netns add rdmaflux-probe 2>/dev/null; then
  skip "'ip netns add' does not work here (no network namespace support or no permission)"
fi
ip netns del rdmaflux-probe
if [ -n "$LOSS" ] && ! command -v iptables >/dev/null 2>&1; then
  skip "--loss needs iptables, which is not installed"
fi

# the namespaces are shared with scripts/striping-netns-bench.sh (and anyone running netns-rails.sh by hand)
if command -v flock >/dev/null 2>&1; then
  exec 8>/tmp/rdmaflux-netns.lock
  flock -w 300 8 || { echo "two-host-it: /tmp/rdmaflux-netns.lock stayed taken for 300 s (another run uses the namespaces)" >&2; exit 1; }
fi

cd "$ROOT"
echo "two-host-it: building verbs and running the loopback pair (TwoRailLoopbackTest)"
mvn -B -o -q -pl verbs test -Dtest=TwoRailLoopbackTest -Dsurefire.failIfNoSpecifiedTests=false
REPORT=verbs/target/surefire-reports/TEST-io.rdmaflux.verbs.soft.net.it.TwoRailLoopbackTest.xml
CP="$(grep -o 'name="surefire.test.class.path" value="[^"]*"' "$REPORT" | sed 's/.*value="//; s/"$//')"
[ -n "$CP" ] || { echo "two-host-it: could not read the test classpath from $REPORT" >&2; exit 1; }
JVM_FLAGS="$(cat .mvn/jvm-flags)"

LOG_DIR="$(mktemp -d /tmp/rdmaflux-two-host-it.XXXXXX)"
cleanup() {
  local rc=$?
  [ -n "${RECEIVER_PID:-}" ] && kill "$RECEIVER_PID" 2>/dev/null || true
  "$ROOT/scripts/netns-rails.sh" down >/dev/null 2>&1 || true
  exit $rc
}
trap cleanup EXIT INT TERM

UP_ARGS=(up --rails 2 --rates "$RATES")
[ -n "$LOSS" ] && UP_ARGS+=(--loss "$LOSS" --loss-ns b)
"$ROOT/scripts/netns-rails.sh" "${UP_ARGS[@]}"

MBIT="$(echo "$RATES" | sed 's/mbit//g')"
# UD datagrams of 2 KiB travel as two IP fragments on the 1500-byte veth MTU: with loss p in B,
# about (1-p)^2 of them arrive; ask for a bit less, and for nearly all without loss
UD_MIN=0.95
[ -n "$LOSS" ] && UD_MIN="$(awk -v p="$LOSS" 'BEGIN { m = (1 - p) * (1 - p) - 0.1; if (m < 0) m = 0; printf "%.3f", m }')"
PORT=7471
# shellcheck disable=SC2086
timeout "$HARD_TIMEOUT" ip netns exec rdmaflux-b java $JVM_FLAGS -cp "$CP" io.rdmaflux.verbs.soft.net.it.TwoRailReceiver \
  --listen "10.77.1.2:$PORT" --addresses 10.77.1.2,10.77.2.2 --bytes-per-rail "$BYTES" --sends-per-rail 64 --ud-min-fraction "$UD_MIN" \
  --timeout-s 100 >"$LOG_DIR/receiver.log" 2>&1 &
RECEIVER_PID=$!
SENDER_RC=0
# shellcheck disable=SC2086
timeout "$HARD_TIMEOUT" ip netns exec rdmaflux-a java $JVM_FLAGS -cp "$CP" io.rdmaflux.verbs.soft.net.it.TwoRailSender \
  --connect "10.77.1.2:$PORT" --addresses 10.77.1.1,10.77.2.1 --bytes-per-rail "$BYTES" --sends-per-rail 64 \
  --rail-limits-mbit "$MBIT" --timeout-s 100 >"$LOG_DIR/sender.log" 2>&1 || SENDER_RC=$?
RECEIVER_RC=0
wait "$RECEIVER_PID" || RECEIVER_RC=$?
RECEIVER_PID=""
sed 's/^/  B | /' "$LOG_DIR/receiver.log"
sed 's/^/  A | /' "$LOG_DIR/sender.log"
if [ "$SENDER_RC" = 0 ] && [ "$RECEIVER_RC" = 0 ]; then
  echo "two-host integration passed (rails $RATES, $BYTES bytes per rail${LOSS:+, UDP loss $LOSS in B})"
  exit 0
fi
echo "two-host integration FAILED: sender exit $SENDER_RC, receiver exit $RECEIVER_RC (124 = hard timeout of ${HARD_TIMEOUT}s); logs in $LOG_DIR" >&2
exit 1
