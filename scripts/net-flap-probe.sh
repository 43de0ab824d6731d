#!/usr/bin/env bash
# Measures how long an RC QP of the soft provider's net fabric stays silent after a link flap (issue 20):
# two namespaces (scripts/netns-rails.sh, names $NETNS_NAME-a/-b, default "flap"), one rail, NetFlapProbe
# sending a SEND every 10 ms from A to B; the rail's veth in B goes down for DOWN_S seconds, TRIALS times;
# prints, per flap, the ms from 'ip link set ... up' to the next completion at A. Root only.
#   scripts/net-flap-probe.sh [CLASSES_DIR] [TRIALS] [DOWN_S] [RETRY_TIMEOUT_MS]
# (the QP fails after 8 retry timeouts without an ACK; default 200 ms, so keep DOWN_S below 1.6 or raise it)
set -euo pipefail
cd "$(dirname "$0")/.."
classes="${1:-verbs/target/classes}"
trials="${2:-5}"
down_s="${3:-1}"
retry_ms="${4:-200}"
export NETNS_NAME="${NETNS_NAME:-flap}" NETNS_SUBNET="${NETNS_SUBNET:-10.78}" NETNS_VETH="${NETNS_VETH:-fx}"
m2="$HOME/.m2/repository"
cp="$classes:$(ls "$m2"/org/agrona/agrona/*/agrona-*.jar | head -1):$(ls "$m2"/org/jspecify/jspecify/1.0.0/jspecify-1.0.0.jar)"
for j in "$m2"/net/openhft/chronicle-bytes/*/chronicle-bytes-*.jar "$m2"/net/openhft/chronicle-core/*/chronicle-core-*.jar; do
  [ -f "$j" ] && cp="$cp:$j"
done
work="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; scripts/netns-rails.sh down >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
scripts/netns-rails.sh up --rails 1
seconds=$((8 + trials * (${down_s%.*} + 3)))
# shellcheck disable=SC2046
ip netns exec "$NETNS_NAME-b" java $(cat .mvn/jvm-flags) -cp "$cp" scripts/NetFlapProbe.java recv "$NETNS_SUBNET.1.2" "$work" "$((seconds + 3))" "$retry_ms" > "$work/recv.log" 2>&1 &
# shellcheck disable=SC2046
ip netns exec "$NETNS_NAME-a" java $(cat .mvn/jvm-flags) -cp "$cp" scripts/NetFlapProbe.java send "$NETNS_SUBNET.1.1" "$work" "$seconds" "$retry_ms" > "$work/send.log" 2>&1 &
for _ in $(seq 1 100); do grep -q '^ack' "$work/send.log" 2>/dev/null && break; sleep 0.1; done
grep -q '^ack' "$work/send.log" || { echo "no traffic"; cat "$work"/*.log; exit 1; }
sleep 1
ups=()
for t in $(seq 1 "$trials"); do
  ip -n "$NETNS_NAME-b" link set "${NETNS_VETH}b1" down
  sleep "$down_s"
  ups+=("$(date +%s%3N)")
  ip -n "$NETNS_NAME-b" link set "${NETNS_VETH}b1" up
  sleep 3
done
wait || true; grep -hv "^ack" "$work"/*.log || true
for u in "${ups[@]}"; do
  first=$(awk -v u="$u" '$1 == "ack" && $2 > u { print $2; exit }' "$work/send.log")
  if [ -n "$first" ]; then echo "flap: link up at $u -> first completion $((first - u)) ms"; else echo "flap: no completion after link up"; fi
done
