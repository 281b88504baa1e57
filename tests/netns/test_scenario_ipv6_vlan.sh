#!/usr/bin/env bash
# Scenario 7, IPv6 and VLAN: the classic overload case with edgeshed (2,000
# requests at 800/s, capacity 500/s), first over IPv6 (2001:db8::1), then
# with every frame on the veth pair carrying an 802.1Q tag (VID 100). Same
# assertions as the classic case (scenario_lib.sh's check_classic_with).
#
# The VLAN: the lab kernels need not have 802.1Q devices (this one is built
# without CONFIG_VLAN_8021Q, so `ip link add ... type vlan` fails), so the
# tag is put on the wire by a tc program on each veth instead: egress
# inserts the 802.1Q header into the frame itself, ingress pops the tag
# (tc ingress runs after XDP). edgeshed is attached to the server's veth at
# xdp-generic, where the frames arrive still tagged: its parser, not the
# kernel, has to step over the VLAN header, and its RST goes back out with
# the tag it came with. There is no VLAN device to attach to; on a kernel
# with one, XDP on the VLAN device would only see untagged frames.
source "$(dirname "$0")/scenario_lib.sh"
: "${BPF_OUT:?folder of the BPF objects and vmlinux.h}"

scenario_up
start_refserver

offer() { load "$1" --target "$2" --rate 800 --count 2000 --timeout-ms 5000; }

# --- IPv6
start_daemon classic MODE=enforce SERVER="$SRV_V6"
sleep 2 # the probe learns the idle latency
offer ipv6 "$SRV_V6"
check_eq "ipv6: offered" "$(jv ipv6 .total.offered)" 2000
check_classic_with ipv6 "ipv6"
pass "scenario 7 over IPv6 ($SRV_V6) with edgeshed: $(short_figures ipv6)"
stop_daemon
# The next part starts from a clean interface, whatever the stop left.
[ -d "/sys/fs/bpf/edgeshed/$SRV_IF" ] && in_srv "$EDGESHED" detach --iface "$SRV_IF" >/dev/null
sleep 1

# --- VLAN 100 on the wire
cat >"$SC_WORK/vlan_tag.bpf.c" <<'EOF'
// 802.1Q on the wire without 802.1Q devices: egress inserts a tag into the
// frame itself; ingress pops the tag that the stack moved out of the frame
// (after XDP has seen it).
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#define TC_ACT_OK 0
#define TC_ACT_SHOT 2
#define ETH_P_8021Q 0x8100
#define VID 100

SEC("tc/vlan_tag")
int vlan_tag(struct __sk_buff *skb)
{
	__u8 hdr[6]; /* TPID, TCI, then the frame's own EtherType */

	if (bpf_skb_load_bytes(skb, 12, hdr + 4, 2))
		return TC_ACT_SHOT;
	if (bpf_skb_adjust_room(skb, 4, BPF_ADJ_ROOM_MAC, 0))
		return TC_ACT_SHOT;
	hdr[0] = ETH_P_8021Q >> 8;
	hdr[1] = ETH_P_8021Q & 0xff;
	hdr[2] = (VID >> 8) & 0x0f;
	hdr[3] = VID & 0xff;
	if (bpf_skb_store_bytes(skb, 12, hdr, sizeof(hdr), 0))
		return TC_ACT_SHOT;
	return TC_ACT_OK;
}

SEC("tc/vlan_untag")
int vlan_untag(struct __sk_buff *skb)
{
	if (skb->vlan_present && (skb->vlan_tci & 0xfff) == VID && bpf_skb_vlan_pop(skb))
		return TC_ACT_SHOT;
	return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "GPL";
EOF
clang=$(command -v clang-14 || command -v clang) || fail "clang is needed to build the VLAN tagger"
"$clang" -O2 -g -target bpf -Wall -Werror -I"$BPF_OUT" -c "$SC_WORK/vlan_tag.bpf.c" \
	-o "$SC_WORK/vlan_tag.bpf.o" || fail "cannot build the VLAN tagger"
in_srv tc qdisc add dev "$SRV_IF" clsact
in_cli tc qdisc add dev "$CLI_IF" clsact
tag_egress() { ip netns exec "$1" tc filter add dev "$2" egress bpf da obj "$SC_WORK/vlan_tag.bpf.o" sec tc/vlan_tag; }
untag_ingress() { ip netns exec "$1" tc filter add dev "$2" ingress bpf da obj "$SC_WORK/vlan_tag.bpf.o" sec tc/vlan_untag; }
tag_egress "$CLI_NS" "$CLI_IF"
# Tagged frames reach the server, whose stack (no VLAN 100 there) drops them.
out=$(in_cli "$TCP_TOOL" connect "$SRV_V4" 80 500 || true)
[ "${out%% *}" = timeout ] || fail "an untagging-free server answered a tagged SYN: $out"
untag_ingress "$SRV_NS" "$SRV_IF"
tag_egress "$SRV_NS" "$SRV_IF"
untag_ingress "$CLI_NS" "$CLI_IF"
expect_connect ok "$SRV_V4" 80
pass "802.1Q tag 100 on every frame of the veth pair (a tagged SYN to an untagging-free server: $out)"

start_daemon classic MODE=enforce
sleep 2 # the probe learns the idle latency
offer vlan "$SRV_V4"
check_eq "vlan: offered" "$(jv vlan .total.offered)" 2000
check_classic_with vlan "vlan"
st=$(es_status)
check_eq "vlan: unparsed frames" "$(jq .counters.unparsed <<<"$st")" 0
check_ge "vlan: RSTs sent" "$(jq .classes.normal.counters.rst_sent <<<"$st")" 1
echo "data plane: $(jq -c '.classes.normal.counters | {admitted, shed_cap, shed_fraction, rst_sent}' <<<"$st"), unparsed 0"
pass "scenario 7 over VLAN 100 (tagged frames, edgeshed at xdp-generic on the parent veth) with edgeshed: $(short_figures vlan)"
stop_daemon
