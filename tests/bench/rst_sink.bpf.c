// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* bench-saturation's client sink: drops, at the client veth's XDP hook, what
 * the server sends to the flood's spoofed sources, counting the RSTs. Passing
 * them up the client's stack would spend the client core that generates the
 * flood, and cap the rate the server core is offered. */
#include "vmlinux.h"
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#define ETH_P_IP 0x0800
#define IPV4_IHL_UNIT 4 /* bytes per unit of the header length field */
/* 203.0.113.0/24, the flood's sources (tests/bench/synflood.cpp). */
#define SINK_NET 0xcb007100u
#define SINK_MASK 0xffffff00u

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} sink_rsts SEC(".maps");

SEC("xdp")
int rst_sink(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = data + sizeof(*eth);
	struct tcphdr *tcp;
	__u32 zero = 0;
	__u64 *count;

	if ((void *)(ip + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP))
		return XDP_PASS;
	if ((bpf_ntohl(ip->daddr) & SINK_MASK) != SINK_NET)
		return XDP_PASS;
	tcp = (void *)ip + (long)ip->ihl * IPV4_IHL_UNIT;
	if (ip->protocol == IPPROTO_TCP && (void *)(tcp + 1) <= end && tcp->rst) {
		count = bpf_map_lookup_elem(&sink_rsts, &zero);
		if (count)
			(*count)++;
	}
	return XDP_DROP;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
