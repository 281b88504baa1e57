#!/usr/bin/env bash
# SYNs crafted to slip past the parser, sent by a raw client to a real
# listener: each connects without edgeshed, and none connects under a
# shed-everything policy at any hook.
#  - a SYN in two IPv4 fragments, the first holding the whole TCP header:
#    decided, and dropped (never answered: `shed_fragment`);
#  - the same with only 8 bytes of TCP in the first fragment, the flags in
#    the second (RFC 1858): too deep to see, dropped while the class sheds
#    (`shed_too_deep`);
#  - a SYN with 5,000 bytes of data whose skb holds only the headers in its
#    linear part (a packet socket with a virtio-net header, on a link with a
#    9,000-byte MTU): at TC, its IP length reaches past the linear data, and
#    it must still be decided;
#  - a SYN to another host's MAC, which a veth (like a bridge or a NIC in
#    promiscuous mode) hands up all the same: never answered with a RST in
#    that host's name (`rst_not_to_host`);
#  - an IPv6 SYN behind a Hop-by-Hop header with a payload length of 0,
#    which Linux takes for a jumbogram's, the packet's own length, Jumbo
#    option or not: decided and refused like the same SYN with its true
#    length (at d8635cc it passed unparsed and connected under shed-all);
#  - a real client's SYN with IP options (IP_OPTIONS): its skb, sent over
#    the veth, keeps its transport header and checksum offsets past where
#    a bare RST ends, so at TC the options must come out before the trim,
#    or the RST is never sent (or sent and dropped by the client's trim).
source "$(dirname "$0")/lib.sh"

PORT=8080
RAW="python3 $(dirname "$0")/../tools/raw_frames.py"
lab_up
in_srv ip link set "$SRV_IF" mtu 9000
in_cli ip link set "$CLI_IF" mtu 9000
serve $PORT
mac_of() { grep -o 'link/ether [^ ]*' | cut -d' ' -f2; }
srv_mac=$(in_srv ip -o link show "$SRV_IF" | mac_of)
cli_mac=$(in_cli ip -o link show "$CLI_IF" | mac_of)

frag_syn() { in_cli $RAW frag-syn "$CLI_V4" "$SRV_V4" $PORT --split "$1"; }
eth_syn() { in_cli $RAW ethernet-syn "$CLI_IF" "$cli_mac" "$@" "$CLI_V4" "$SRV_V4" $PORT; }
nonlinear_syn() { eth_syn "$srv_mac" --payload 5000; }
hbh_syn() { in_cli $RAW ipv6-hbh-syn "$CLI_IF" "$cli_mac" "$srv_mac" "$CLI_V6" "$SRV_V6" $PORT --payload-length "$1"; }
other_host=02:00:00:00:00:99
counter() { "$EDGESHED" status --iface "$SRV_IF" --json | jq "$1"; }
# Eight NOPs of IP options on every segment of the connection.
options_connect() {
	in_cli python3 -c '
import socket, sys
s = socket.socket()
s.setsockopt(socket.IPPROTO_IP, socket.IP_OPTIONS, bytes([1] * 8))
s.settimeout(1)
try:
    s.connect((sys.argv[1], int(sys.argv[2])))
    print("connected")
except ConnectionRefusedError:
    print("refused")
except OSError as e:
    print(type(e).__name__)
' "$SRV_V4" $PORT
}

# Without edgeshed the kernel makes a connection of each, so a "none" below
# is edgeshed's doing, not a frame the server would have ignored anyway.
[ "$(frag_syn 40)" = synack ] || fail "no SYN-ACK to a fragmented SYN without edgeshed"
[ "$(frag_syn 8)" = synack ] || fail "no SYN-ACK to a tiny-fragment SYN without edgeshed"
[ "$(nonlinear_syn)" = synack ] || fail "no SYN-ACK to a non-linear SYN without edgeshed"
[ "$(hbh_syn -1)" = synack ] || fail "no SYN-ACK to an IPv6 SYN behind Hop-by-Hop without edgeshed"
[ "$(hbh_syn 0)" = synack ] || fail "no SYN-ACK to an IPv6 Hop-by-Hop SYN of payload length 0 without edgeshed"
[ "$(options_connect)" = connected ] || fail "a client with IP options does not connect without edgeshed"
pass "without edgeshed: each crafted SYN gets a SYN-ACK"

for hook in xdp-generic tc; do
	in_srv "$EDGESHED" attach --iface "$SRV_IF" --hook $hook --port $PORT --mode enforce \
		--action rst --heartbeat-timeout-ms 0 >/dev/null
	"$EDGESHED" policy --iface "$SRV_IF" --class normal --shed-fraction 1 >/dev/null

	[ "$(frag_syn 40)" = none ] || fail "$hook: a fragmented SYN connected"
	[ "$(counter .counters.shed_fragment)" = 1 ] || fail "$hook: shed_fragment $(counter .counters)"
	[ "$(counter .classes.normal.counters.rst_sent)" = 0 ] || fail "$hook: a fragment was answered"
	pass "$hook: fragmented SYN dropped, unanswered (shed_fragment 1)"

	[ "$(frag_syn 8)" = none ] || fail "$hook: a tiny-fragment SYN connected"
	[ "$(counter .counters.shed_too_deep)" = 1 ] || fail "$hook: shed_too_deep $(counter .counters)"
	pass "$hook: tiny-fragment SYN dropped (shed_too_deep $(counter .counters.shed_too_deep))"

	[ "$(nonlinear_syn)" = rst ] || fail "$hook: a non-linear SYN was not refused by a RST"
	[ "$(counter .classes.normal.counters.shed_fraction)" = 2 ] ||
		fail "$hook: the non-linear SYN was not decided: $(counter .)"
	[ "$(counter .counters.unparsed)" = 0 ] || fail "$hook: unparsed $(counter .counters.unparsed)"
	pass "$hook: non-linear SYN decided and refused (shed_fraction 2, unparsed 0)"

	[ "$(eth_syn "$srv_mac")" = rst ] || fail "$hook: a SYN to our MAC was not refused by a RST"
	[ "$(eth_syn $other_host)" = none ] || fail "$hook: a SYN to another host's MAC was answered"
	[ "$(counter .counters.rst_not_to_host)" = 1 ] || fail "$hook: rst_not_to_host $(counter .counters)"
	pass "$hook: a SYN to another host's MAC is dropped, not answered (rst_not_to_host 1)"

	[ "$(hbh_syn -1)" = rst ] || fail "$hook: an IPv6 SYN behind Hop-by-Hop was not refused by a RST"
	[ "$(hbh_syn 0)" = rst ] || fail "$hook: an IPv6 Hop-by-Hop SYN of payload length 0 was not refused by a RST"
	[ "$(counter .counters.unparsed)" = 0 ] || fail "$hook: unparsed $(counter .counters.unparsed)"
	pass "$hook: IPv6 SYNs behind Hop-by-Hop, true length and payload length 0, refused by a RST (unparsed 0)"

	rst_sent=$(counter .classes.normal.counters.rst_sent)
	[ "$(options_connect)" = refused ] || fail "$hook: a SYN with IP options was not refused by a RST"
	[ "$(counter .classes.normal.counters.rst_sent)" = $((rst_sent + 1)) ] ||
		fail "$hook: the SYN with IP options: rst_sent $(counter .classes.normal.counters)"
	pass "$hook: a real client's SYN with 8 bytes of IP options refused by a RST it accepts"

	in_srv "$EDGESHED" detach --iface "$SRV_IF"
done
echo "test_evasions: all checks passed"
