#!/usr/bin/env bash
# edgeshed attach/detach on a real veth, at each hook: the program shows in
# `bpftool net`, a shed SYN is refused by a real RST (or dropped), other
# ports and established traffic flow, and detach leaves nothing behind.
source "$(dirname "$0")/lib.sh"

PORT=8080
OPEN_PORT=9090
lab_up
serve $PORT
serve $OPEN_PORT

# Native XDP_TX on veth reaches the peer only if the peer runs XDP too.
peer_pin=/sys/fs/bpf/es_peer_pass_$LAB_ID
bpftool prog load "$BPF_OUT/baseline.bpf.o" "$peer_pin" type xdp
LAB_PINS+=("$peer_pin")
in_cli bpftool net attach xdp pinned "$peer_pin" dev "$CLI_IF"

# A foreign program in the other XDP mode: the kernel runs one mode at a
# time, so edgeshed cannot run beside it (in the same mode it chains:
# test_xdp_neighbours.sh).
out=$(in_cli "$EDGESHED" attach --iface "$CLI_IF" --hook xdp-generic --port $PORT 2>&1) &&
	fail "attach beside a foreign XDP program of the other mode succeeded"
grep -q "another XDP program" <<<"$out" || fail "unclear refusal: $out"
pass "refuses a foreign XDP program of the other mode: $out"
[ ! -e "/sys/fs/bpf/edgeshed/$CLI_IF" ] || fail "refused attach left pins"

out=$("$EDGESHED" attach --iface no-such-if0 --port $PORT 2>&1) && fail "attach to a missing interface succeeded"
grep -q "no such interface" <<<"$out" || fail "unclear error: $out"
pass "missing interface: $out"

# A device neither Ethernet nor IP (here a tun device given PPP's link
# type) would pass every packet as unparsed. IP devices are attached in
# test_tunnel.sh.
ARPHRD_PPP=512
in_srv ip tuntap add dev es-tun0 mode tun
in_srv python3 "$(dirname "$0")/../tools/ipip_tunnel.py" set-link-type es-tun0 $ARPHRD_PPP
in_srv ip link set es-tun0 up
out=$(in_srv "$EDGESHED" attach --iface es-tun0 --hook xdp-generic --port $PORT 2>&1) &&
	fail "attach to a PPP device succeeded"
grep -q "has link type $ARPHRD_PPP: edgeshed parses Ethernet frames, and IP packets" <<<"$out" ||
	fail "unclear refusal: $out"
[ ! -e /sys/fs/bpf/edgeshed/es-tun0 ] || fail "refused attach left pins"
in_srv ip link del es-tun0
pass "a device of link type PPP refused: $out"

# A pin directory another user owns is not trusted, and left as it is.
foreign=/sys/fs/bpf/edgeshed/$SRV_IF
LAB_HOOKS+=("rmdir $foreign 2>/dev/null")
mkdir -p "$foreign"
chown 65534 "$foreign"
out=$(in_srv "$EDGESHED" attach --iface "$SRV_IF" --hook tc --port $PORT 2>&1) &&
	fail "attach into a foreign pin directory succeeded"
grep -q "belongs to uid 65534" <<<"$out" || fail "unclear refusal: $out"
[ "$(stat -c %u "$foreign")" = 65534 ] || fail "the foreign directory was changed"
in_srv tc filter show dev "$SRV_IF" ingress | grep -q edgeshed && fail "refused attach left a filter"
rmdir "$foreign"
pass "foreign pin directory refused: $out"

for hook in xdp xdp-generic tc; do
	in_srv "$EDGESHED" attach --iface "$SRV_IF" --hook $hook --port $PORT --mode enforce \
		--action rst --heartbeat-timeout-ms 0
	net=$(in_srv bpftool net show dev "$SRV_IF")
	case $hook in
	tc) want=edgeshed_tc ;;
	*) want=edgeshed_xdp ;;
	esac
	id=$(grep -m1 -o 'id [0-9]*' <<<"$net" | tr -dc 0-9)
	prog=$(bpftool prog show id "${id:-0}" 2>&1 || true)
	grep -q "$want" <<<"$prog" || fail "$hook: bpftool net shows no $want: $net / $prog"
	pass "$hook: attached, bpftool net: $(tr '\n' ' ' <<<"$net")"

	expect_connect ok $SRV_V4 $PORT  # the all-zero policy admits
	"$EDGESHED" policy --iface "$SRV_IF" --class normal --shed-fraction 1 >/dev/null
	expect_connect refused $SRV_V4 $PORT
	expect_connect refused $SRV_V6 $PORT
	expect_connect ok $SRV_V4 $OPEN_PORT  # unprotected port

	# Re-attaching replaces the program in place and keeps the counters.
	in_srv "$EDGESHED" attach --iface "$SRV_IF" --hook $hook --port $PORT --mode enforce \
		--action drop --heartbeat-timeout-ms 0 >/dev/null
	"$EDGESHED" policy --iface "$SRV_IF" --class normal --shed-fraction 1 >/dev/null
	expect_connect timeout $SRV_V4 $PORT
	json=$("$EDGESHED" status --iface "$SRV_IF" --json)
	sent=$(jq '.classes.normal.counters.rst_sent' <<<"$json")
	[ "${sent:-0}" -ge 2 ] || fail "$hook: rst_sent $sent after two refusals (status: $json)"
	pass "$hook: status counts rst_sent=$sent across the replace"

	in_srv "$EDGESHED" detach --iface "$SRV_IF"
	net=$(in_srv bpftool net show dev "$SRV_IF")
	grep -q 'id [0-9]' <<<"$net" && fail "$hook: program left after detach: $net"
	in_srv tc qdisc show dev "$SRV_IF" | grep -q clsact && fail "$hook: clsact left after detach"
	[ ! -e "/sys/fs/bpf/edgeshed/$SRV_IF" ] || fail "$hook: pins left after detach"
	expect_connect ok $SRV_V4 $PORT
	pass "$hook: detached, nothing left"
done

# Neither root nor given the capabilities: refused before anything is
# touched, naming what is missing.
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$EDGESHED" attach --iface "$SRV_IF" --port $PORT 2>&1) &&
	fail "attach as nobody succeeded"
grep -q "missing CAP_BPF, CAP_NET_ADMIN, CAP_PERFMON" <<<"$out" || fail "unclear refusal: $out"
pass "no capabilities: $out"

# A device without native XDP (the namespace's loopback): the error says
# which hooks to use instead.
if [ ! -e /sys/fs/bpf/edgeshed/lo ]; then
	out=$(in_srv "$EDGESHED" attach --iface lo --hook xdp --port $PORT 2>&1) &&
		fail "native XDP on loopback succeeded"
	grep -q "hook unsupported" <<<"$out" || fail "unclear error: $out"
	[ ! -e "/sys/fs/bpf/edgeshed/lo" ] || fail "failed attach left pins"
	pass "native XDP unsupported: $out"
fi

# A pinned data plane of another ABI is refused, never misread, and detach
# still removes it.
in_srv "$EDGESHED" attach --iface "$SRV_IF" --hook tc --port $PORT >/dev/null
cfg_bytes=$(bpftool -j map show pinned "/sys/fs/bpf/edgeshed/$SRV_IF/es_config" | jq .bytes_value)
bpftool map update pinned "/sys/fs/bpf/edgeshed/$SRV_IF/es_config" key 0 0 0 0 \
	value 99 $(printf '0 %.0s' $(seq $((cfg_bytes - 1))))
out=$(in_srv "$EDGESHED" attach --iface "$SRV_IF" --hook tc --port $PORT 2>&1) &&
	fail "attach over another ABI succeeded"
grep -q "ABI version 99" <<<"$out" && grep -q "edgeshed detach" <<<"$out" || fail "unclear ABI refusal: $out"
out2=$("$EDGESHED" status --iface "$SRV_IF" 2>&1) && fail "status read another ABI's maps"
in_srv "$EDGESHED" detach --iface "$SRV_IF" >/dev/null
[ ! -e "/sys/fs/bpf/edgeshed/$SRV_IF" ] || fail "detach left another ABI's pins"
in_srv tc filter show dev "$SRV_IF" ingress | grep -q edgeshed && fail "detach left another ABI's filter"
in_srv tc qdisc del dev "$SRV_IF" clsact  # its owner flag was not trusted: left in place
pass "other ABI refused: $out"

# A clsact qdisc that was there before edgeshed stays after it.
in_srv tc qdisc add dev "$SRV_IF" clsact
in_srv "$EDGESHED" attach --iface "$SRV_IF" --hook tc --port $PORT >/dev/null
in_srv "$EDGESHED" detach --iface "$SRV_IF" >/dev/null
in_srv tc qdisc show dev "$SRV_IF" | grep -q clsact || fail "detach removed a qdisc it did not create"
pass "foreign clsact qdisc kept"

out=$(in_srv "$EDGESHED" detach --iface "$SRV_IF" 2>&1) && fail "second detach succeeded"
pass "detach of a detached interface: $out"
echo "test_attach: all checks passed"
