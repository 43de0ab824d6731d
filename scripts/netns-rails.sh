#!/usr/bin/env bash
# Two hosts, N rails: network namespaces rdmaflux-a and rdmaflux-b joined by N veth pairs.
#
#   scripts/netns-rails.sh up [--rails N] [--rates 800mbit,200mbit] [--loss 0.01] [--loss-ns a|b]
#   scripts/netns-rails.sh down
#   scripts/netns-rails.sh status
#
# Rail i (1-based) is veth pair rfa<i> (in host A) <-> rfb<i> (in host B), subnet 10.77.<i>.0/24:
# host A is 10.77.<i>.1, host B is 10.77.<i>.2. Addresses exist only inside the two namespaces.
# --rates shapes each rail's egress in both directions with tc tbf (netem is not available here).
# --loss drops that fraction of incoming UDP datagrams inside one namespace (default b) with
# iptables -m statistic --mode random. 'down' removes everything 'up' made. Needs root.
set -euo pipefail

# NETNS_NAME, NETNS_SUBNET and NETNS_VETH name another pair of namespaces, so a second user (e.g.
# scripts/onesided-netns-bench.sh) does not disturb this one's: namespaces $NETNS_NAME-a/-b, subnets
# $NETNS_SUBNET.<rail>.0/24, veth pairs ${NETNS_VETH}a<i> <-> ${NETNS_VETH}b<i>.
NS_A="${NETNS_NAME:-rdmaflux}-a"
NS_B="${NETNS_NAME:-rdmaflux}-b"
SUBNET_PREFIX="${NETNS_SUBNET:-10.77}"
VETH="${NETNS_VETH:-rf}"

die() { echo "netns-rails: $*" >&2; exit 2; }

need_root() {
  [ "$(id -u)" = 0 ] || die "must run as root (ip netns needs CAP_SYS_ADMIN); try: sudo $0 $*"
  command -v ip >/dev/null || die "'ip' (iproute2) is not installed; apt-get install iproute2"
}

down() {
  for ns in "$NS_A" "$NS_B"; do
    if ip netns list | grep -qw "$ns"; then
      ip netns del "$ns"
    fi
  done
  # veth pairs die with their namespace; remove any left in the root namespace by a failed 'up'
  for link in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1 | grep -E "^${VETH}[ab][0-9]+\$" || true); do
    ip link del "$link" 2>/dev/null || true
  done
  echo "netns-rails: down"
}

status() {
  for ns in "$NS_A" "$NS_B"; do
    if ip netns list | grep -qw "$ns"; then
      echo "== $ns"; ip -n "$ns" -br addr; tc -n "$ns" qdisc show | grep tbf || true
    else
      echo "== $ns: absent"
    fi
  done
}

up() {
  local rails=2 rates="" loss="" loss_ns=b
  while [ $# -gt 0 ]; do
    case "$1" in
      --rails) rails="${2:?--rails needs a number}"; shift 2 ;;
      --rates) rates="${2:?--rates needs a list like 800mbit,200mbit}"; shift 2 ;;
      --loss) loss="${2:?--loss needs a probability like 0.01}"; shift 2 ;;
      --loss-ns) loss_ns="${2:?--loss-ns needs a or b}"; shift 2 ;;
      *) die "unknown option '$1' for up; options: --rails N --rates r1,r2 --loss p --loss-ns a|b" ;;
    esac
  done
  [[ "$rails" =~ ^[1-9][0-9]?$ ]] || die "--rails must be 1..99 but it was '$rails'"
  IFS=, read -r -a rate_list <<< "$rates"
  if [ -n "$rates" ] && [ "${#rate_list[@]}" -ne "$rails" ]; then
    die "--rates has ${#rate_list[@]} entries but there are $rails rails; give one rate per rail"
  fi
  if [ -n "$loss" ]; then
    awk -v p="$loss" 'BEGIN { exit !(p >= 0 && p < 1) }' || die "--loss must be a probability in [0, 1) but it was '$loss'"
    [[ "$loss_ns" == a || "$loss_ns" == b ]] || die "--loss-ns must be a or b but it was '$loss_ns'"
    command -v iptables >/dev/null || die "--loss needs iptables; apt-get install -y iptables"
  fi

  down >/dev/null
  ip netns add "$NS_A"
  ip netns add "$NS_B"
  ip -n "$NS_A" link set lo up
  ip -n "$NS_B" link set lo up
  for i in $(seq 1 "$rails"); do
    ip link add "${VETH}a$i" type veth peer name "${VETH}b$i"
    ip link set "${VETH}a$i" netns "$NS_A"
    ip link set "${VETH}b$i" netns "$NS_B"
    ip -n "$NS_A" addr add "$SUBNET_PREFIX.$i.1/24" dev "${VETH}a$i"
    ip -n "$NS_B" addr add "$SUBNET_PREFIX.$i.2/24" dev "${VETH}b$i"
    ip -n "$NS_A" link set "${VETH}a$i" up
    ip -n "$NS_B" link set "${VETH}b$i" up
    if [ -n "$rates" ]; then
      local rate="${rate_list[$((i - 1))]}"
      for side in "$NS_A ${VETH}a$i" "$NS_B ${VETH}b$i"; do
        set -- $side
        tc -n "$1" qdisc add dev "$2" root tbf rate "$rate" burst 64kb latency 50ms \
          || die "tc tbf rejected rate '$rate' on rail $i; use a tc rate like 800mbit"
      done
    fi
  done
  if [ -n "$loss" ]; then
    local ns="$NS_B"; [ "$loss_ns" = a ] && ns="$NS_A"
    ip netns exec "$ns" iptables -A INPUT -p udp -m statistic --mode random --probability "$loss" -j DROP
  fi
  # prove every rail is up (and, where ping exists, carries traffic) before anyone relies on it
  for i in $(seq 1 "$rails"); do
    ip -n "$NS_A" link show "${VETH}a$i" | grep -q "state UP" \
      || die "rail $i: link ${VETH}a$i did not come up"
    if command -v ping >/dev/null; then
      ip netns exec "$NS_A" ping -c 1 -W 2 "$SUBNET_PREFIX.$i.2" >/dev/null \
        || die "rail $i ($SUBNET_PREFIX.$i.1 -> $SUBNET_PREFIX.$i.2) does not carry traffic"
    fi
  done
  echo "netns-rails: up: $rails rail(s); host A = $NS_A ($SUBNET_PREFIX.<rail>.1), host B = $NS_B ($SUBNET_PREFIX.<rail>.2)${rates:+; rates $rates}${loss:+; UDP loss $loss in host $loss_ns}"
}

cmd="${1:-}"; shift || true
case "$cmd" in
  up) need_root; up "$@" ;;
  down) need_root; down ;;
  status) need_root; status ;;
  *) echo "usage: $0 up [--rails N] [--rates r1,r2] [--loss p] [--loss-ns a|b] | down | status" >&2; exit 2 ;;
esac
