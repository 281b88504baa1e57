#!/usr/bin/env bash
# A host that decapsulates (IPIP, GRE, WireGuard, FOU) receives the inner
# SYN on the tunnel's device: the underlay's device carries it as IPIP, not
# TCP, and edgeshed attached there sees no SYN (issue #38, point 7). Attached
# to the tunnel's device too, it decides and refuses the inner SYN, and its
# RST goes back through the tunnel.
# This kernel has no IPIP module: a userspace IPIP endpoint over a tun
# device with an IPIP device's link type (ARPHRD_TUNNEL) stands in for one
# (tests/tools/ipip_tunnel.py); the stack sees the same thing, a packet that
# starts at its IP header on a device without Ethernet.
source "$(dirname "$0")/lib.sh"

PORT=8080
TUNNEL="python3 $(dirname "$0")/../tools/ipip_tunnel.py"
TUN_IF="es-t$LAB_ID"
ARPHRD_TUNNEL=768
# Different /16s: a RST with its addresses swapped differs in the bytes
# generic XDP would read as an EtherType (why only TC may answer here).
INNER_SRV=192.0.2.1
INNER_CLI=198.51.100.200
lab_up
LAB_HOOKS+=("[ -d /sys/fs/bpf/edgeshed/$TUN_IF ] && in_srv \"\$EDGESHED\" detach --iface $TUN_IF >/dev/null 2>&1; rm -rf /sys/fs/bpf/edgeshed/$TUN_IF")
serve $PORT

in_srv ip tuntap add dev "$TUN_IF" mode tun
in_srv $TUNNEL set-link-type "$TUN_IF" $ARPHRD_TUNNEL
in_srv ip link show "$TUN_IF" | grep -q "link/ipip" || fail "the tun device is not of IPIP's link type"
in_srv ip addr add "$INNER_SRV/32" dev "$TUN_IF"
in_srv ip link set "$TUN_IF" up
in_srv ip route add "$INNER_CLI/32" dev "$TUN_IF"
ready=$(mktemp)
LAB_DIRS+=("$ready")
# python -u: "ready" must reach the file at once.
nsenter --net="/run/netns/$SRV_NS" $TUNNEL endpoint "$TUN_IF" "$CLI_V4" --seconds 120 >"$ready" &
LAB_PIDS+=($!)
wait_for "the tunnel's endpoint" grep -q ready "$ready"

inner_syn() { in_cli $TUNNEL syn "$SRV_V4" "$INNER_CLI" "$INNER_SRV" $PORT; }
shed_all() {
	"$EDGESHED" policy --iface "$1" --class normal --shed-fraction 1 >/dev/null
}
counter() { "$EDGESHED" status --iface "$1" --json | jq "$2"; }

[ "$(inner_syn)" = synack ] || fail "no SYN-ACK through the tunnel without edgeshed"
pass "without edgeshed: the SYN inside IPIP gets a SYN-ACK back through the tunnel"

# Attached to the underlay only: its own SYNs are refused, the tunnel's pass.
in_srv "$EDGESHED" attach --iface "$SRV_IF" --hook xdp-generic --port $PORT --mode enforce \
	--action rst --heartbeat-timeout-ms 0 >/dev/null
shed_all "$SRV_IF"
expect_connect refused "$SRV_V4" $PORT
[ "$(inner_syn)" = synack ] ||
	fail "edgeshed on the underlay refused a SYN inside IPIP: this test's premise is wrong"
pass "attached to the underlay only: its SYN refused, the SYN inside IPIP still connects"

for hook in xdp xdp-generic; do
	out=$(in_srv "$EDGESHED" attach --iface "$TUN_IF" --hook $hook --port $PORT 2>&1) &&
		fail "$hook on an IP device was accepted"
	grep -q "XDP cannot answer its packets; attach with --hook tc" <<<"$out" ||
		fail "unclear refusal: $out"
	[ ! -e "/sys/fs/bpf/edgeshed/$TUN_IF" ] || fail "refused attach left pins"
done
pass "XDP (native and generic) on the tunnel's device refused: $out"

in_srv "$EDGESHED" attach --iface "$TUN_IF" --hook tc --port $PORT --mode enforce \
	--action rst --heartbeat-timeout-ms 0 >/dev/null
shed_all "$TUN_IF"
[ "$(inner_syn)" = rst ] || fail "tc: the SYN inside IPIP was not refused by a RST"
[ "$(counter "$TUN_IF" .classes.normal.counters.rst_sent)" = 1 ] ||
	fail "tc: rst_sent $(counter "$TUN_IF" .classes.normal.counters)"
[ "$(counter "$TUN_IF" .counters.unparsed)" = 0 ] || fail "tc: unparsed $(counter "$TUN_IF" .counters)"
"$EDGESHED" policy --iface "$TUN_IF" --class normal --shed-fraction 0 >/dev/null
[ "$(inner_syn)" = synack ] || fail "tc: an admitted SYN inside IPIP did not connect"
pass "tc on the tunnel's device: the inner SYN refused by a RST back through the tunnel; admitted, it connects"
in_srv "$EDGESHED" detach --iface "$TUN_IF"
echo "test_tunnel: all checks passed"
