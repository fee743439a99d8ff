#!/usr/bin/env bash
# Two hosts for the LAN two-host test: `source scripts/lan-netns.sh; netns_up; …; netns_down`.
# Creates two network namespaces joined by a veth pair (link-local addresses 169.254.77.1 and .2, multicast on,
# 224.0.0.0/4 routed to the veth) and exports OPENGAMEKIT_TEST_NETNS="NS_A:IF_A NS_B:IF_B" for the tests.
# Needs root. When the namespaces cannot be created it says why and exports nothing (the test then skips, or
# fails under GAMECENTER_REQUIRE_LAN_PEERS=1). netns_down removes them; call it from an EXIT trap.

NETNS_PREFIX="ogk$$"

netns_up() {
  local a="${NETNS_PREFIX}a" b="${NETNS_PREFIX}b" va="${NETNS_PREFIX}va" vb="${NETNS_PREFIX}vb"
  if ! command -v ip >/dev/null; then
    echo "installing iproute2 from Debian…"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 iproute2 >/dev/null || true
  fi
  if ! { ip netns add "$a" && ip netns add "$b"; } 2>/tmp/netns-error.$$; then
    echo "warning: cannot create network namespaces ($(cat /tmp/netns-error.$$)); the two-host LAN test will not run"
    rm -f /tmp/netns-error.$$
    netns_down
    return 0
  fi
  rm -f /tmp/netns-error.$$
  ip link add "$va" type veth peer name "$vb"
  ip link set "$va" netns "$a"
  ip link set "$vb" netns "$b"
  local ns dev addr
  for pair in "$a:$va:169.254.77.1" "$b:$vb:169.254.77.2"; do
    IFS=: read -r ns dev addr <<<"$pair"
    ip -n "$ns" link set lo up
    ip -n "$ns" addr add "$addr/24" dev "$dev"
    ip -n "$ns" link set "$dev" multicast on
    ip -n "$ns" link set "$dev" up
    ip -n "$ns" route add 224.0.0.0/4 dev "$dev"
  done
  export OPENGAMEKIT_TEST_NETNS="$a:$va $b:$vb"
  echo "network namespaces $a ($va 169.254.77.1) and $b ($vb 169.254.77.2) joined by a veth pair"
}

netns_down() {
  local ns
  for ns in "${NETNS_PREFIX}a" "${NETNS_PREFIX}b"; do
    ip netns del "$ns" 2>/dev/null || true
  done
}
