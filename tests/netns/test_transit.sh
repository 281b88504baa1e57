#!/usr/bin/env bash
# Decide only what is ours (issue #38, point 3). The server namespace is a
# router here: the client reaches a backend host through it. edgeshed on the
# router's ingress, shedding everything by RST on the protected port:
#  - a SYN to the router's own address is refused (RST);
#  - a SYN to the backend, routed through, connects: transit, counted, no
#    RST forged in the backend's name;
#  - with the backend's network as a configured destination
#    (--destination), the same SYN is shed like the router's own;
#  - under the daemon, an address added to the router is decided from the
#    moment the kernel routes it locally (the daemon follows the routes).
# At xdp-generic and tc.
source "$(dirname "$0")/lib.sh"

PORT=8080
BACK_NS="es-back-$LAB_ID"
BACK_IF="es-b$LAB_ID"    # the backend's end
ROUTER_IF="es-r$LAB_ID"  # the router's end toward the backend
ROUTER_BACK_V4=192.0.2.1
BACK_V4=192.0.2.2
ADDED_V4=198.51.100.77   # added to the router under the daemon
lab_up
LAB_HOOKS+=("ip netns del $BACK_NS 2>/dev/null")
ip netns add "$BACK_NS"
in_back() { nsenter --net="/run/netns/$BACK_NS" "$@"; }
ip link add "$ROUTER_IF" netns "$SRV_NS" type veth peer name "$BACK_IF" netns "$BACK_NS"
in_srv ip addr add "$ROUTER_BACK_V4/24" dev "$ROUTER_IF"
in_srv ip link set "$ROUTER_IF" up
in_back ip link set lo up
in_back ip addr add "$BACK_V4/24" dev "$BACK_IF"
in_back ip link set "$BACK_IF" up
in_back ip route add default via "$ROUTER_BACK_V4"
in_srv sysctl -qw net.ipv4.ip_forward=1
in_cli ip route add 192.0.2.0/24 via "$SRV_V4"

serve $PORT
nsenter --net="/run/netns/$BACK_NS" "$TCP_TOOL" serve $PORT 120 &
LAB_PIDS+=($!)
wait_for --within 5 "the backend to listen" tcp_listens "$BACK_NS" $PORT

counter() { "$EDGESHED" status --iface "$SRV_IF" --json | jq "$1"; }
shed_all() {
	"$EDGESHED" policy --iface "$SRV_IF" --class normal --shed-fraction 1 >/dev/null
}

expect_connect ok "$BACK_V4" $PORT
pass "without edgeshed: the backend answers through the router"

for hook in xdp-generic tc; do
	in_srv "$EDGESHED" attach --iface "$SRV_IF" --hook $hook --port $PORT --mode enforce \
		--action rst --heartbeat-timeout-ms 0 >/dev/null
	shed_all
	expect_connect refused "$SRV_V4" $PORT
	expect_connect ok "$BACK_V4" $PORT
	[ "$(counter .counters.transit)" -ge 1 ] || fail "$hook: transit not counted: $(counter .counters)"
	[ "$(counter .classes.normal.counters.rst_sent)" = 1 ] ||
		fail "$hook: RSTs $(counter .classes.normal.counters.rst_sent), want the one to the router"
	pass "$hook: the router's own SYN refused, the backend's routed through (transit $(counter .counters.transit))"

	in_srv "$EDGESHED" attach --iface "$SRV_IF" --hook $hook --port $PORT --mode enforce \
		--action rst --heartbeat-timeout-ms 0 --destination 192.0.2.0/24 >/dev/null
	shed_all
	expect_connect refused "$BACK_V4" $PORT
	pass "$hook: with 192.0.2.0/24 a destination of ours, the backend's SYN is shed too"
	in_srv "$EDGESHED" detach --iface "$SRV_IF" >/dev/null
done

# Under the daemon: an address added later is the host's from then on.
work=$(mktemp -d)
LAB_DIRS+=("$work")
toml=$(daemon_config "$work" $PORT enforce)
log=$work/daemon.log
lab_daemon "$toml" "$log"
dst_listed() {
	bpftool -j map dump pinned "/sys/fs/bpf/edgeshed/$SRV_IF/es_dst4" |
		jq -e --arg a "$1" 'any(.[]; .formatted.key.addr | map(tostring) | join(".") == $a)' >/dev/null
}
wait_for "the daemon's destinations" dst_listed "$SRV_V4"
dst_listed "$ADDED_V4" && fail "$ADDED_V4 is a destination before it is added"
in_srv ip addr add "$ADDED_V4/32" dev "$SRV_IF"
wait_for "$ADDED_V4 among the destinations" dst_listed "$ADDED_V4"
pass "an address added under the daemon is a destination of ours at once"
in_srv ip addr del "$ADDED_V4/32" dev "$SRV_IF"
dst_gone() { ! dst_listed "$1"; }
wait_for "$ADDED_V4 gone from the destinations" dst_gone "$ADDED_V4"
pass "and is gone once removed"
