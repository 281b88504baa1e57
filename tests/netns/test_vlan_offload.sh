#!/usr/bin/env bash
# A NIC with rx-vlan-offload strips the VLAN tag before native XDP sees the
# frame: edgeshed's RST, built from the frame's bytes, would leave untagged,
# on the native VLAN (issue #38, point 5). The program bound to the device
# asks the driver for the tag (bpf_xdp_metadata_rx_vlan_tag(), Linux 6.8)
# and puts it back; generic XDP and TC keep it in the skb.
# The client's tc program tags its SYNs in the skb's metadata, as a VLAN
# device over a NIC with tx-vlan-offload does: the server's veth receives
# them stripped, as such a NIC would. This kernel has no 8021q module, so
# the client's stack drops the tagged RST (no device for VLAN 100); its
# packet socket still sees it, with its tag.
source "$(dirname "$0")/lib.sh"

PORT=8080 # tests/tools/vlan_push.bpf.c tags segments to it
VID=100
lab_up
client_xdp_pass
pin=/sys/fs/bpf/es-vlan-push-$LAB_ID
bpftool prog load "${BPF_OUT:?}/vlan_push.bpf.o" "$pin" type classifier
LAB_PINS+=("$pin")
in_cli tc qdisc add dev "$CLI_IF" clsact
in_cli tc filter add dev "$CLI_IF" egress bpf direct-action pinned "$pin"
serve $PORT

rst_vlan() { in_cli python3 "$(dirname "$0")/../tools/rst_vlan.py" "$CLI_IF" "$SRV_V4" $PORT; }

for hook in xdp xdp-generic tc; do
	in_srv "$EDGESHED" attach --iface "$SRV_IF" --hook $hook --port $PORT --mode enforce \
		--action rst --heartbeat-timeout-ms 0 >/dev/null
	"$EDGESHED" policy --iface "$SRV_IF" --class normal --shed-fraction 1 >/dev/null
	out=$(rst_vlan)
	[ "$out" = "rst vlan $VID" ] || fail "$hook: the RST to a SYN of VLAN $VID: $out"
	rst_sent=$("$EDGESHED" status --iface "$SRV_IF" --json | jq .classes.normal.counters.rst_sent)
	[ "$rst_sent" = 1 ] || fail "$hook: rst_sent $rst_sent"
	pass "$hook: the SYN of VLAN $VID, its tag stripped before the hook, refused by a RST of VLAN $VID"
	in_srv "$EDGESHED" detach --iface "$SRV_IF" >/dev/null
done
echo "test_vlan_offload: all checks passed"
