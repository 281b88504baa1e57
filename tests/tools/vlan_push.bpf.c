// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* A client's egress TC program for tests/netns/test_vlan_offload.sh: tags
 * every TCP segment to TAGGED_PORT with VLAN TAG_VID the way a VLAN device
 * over a NIC with tx-vlan-offload does, in the skb's metadata rather than
 * in its bytes. The veth peer then receives it as a NIC with rx-vlan-offload
 * would: the tag stripped, out of the frame that native XDP sees. */
#include "vmlinux.h"
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#define TC_ACT_UNSPEC (-1)
#define ETH_P_IP 0x0800
#define ETH_P_8021Q 0x8100
#define IPV4_IHL_UNIT 4 /* bytes per unit of the header length field */
#define TAGGED_PORT 8080
#define TAG_VID 100

SEC("tc")
int vlan_push(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = data + sizeof(*eth);
	struct tcphdr *tcp;

	if ((void *)(ip + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP) ||
	    ip->protocol != IPPROTO_TCP)
		return TC_ACT_UNSPEC;
	tcp = (void *)ip + (long)ip->ihl * IPV4_IHL_UNIT;
	if ((void *)(tcp + 1) > end || tcp->dest != bpf_htons(TAGGED_PORT))
		return TC_ACT_UNSPEC;
	bpf_skb_vlan_push(skb, bpf_htons(ETH_P_8021Q), TAG_VID);
	return TC_ACT_UNSPEC;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
