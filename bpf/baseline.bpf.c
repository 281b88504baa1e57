// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The benchmark's reference: the cheapest program an XDP or TC hook can run. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#define TC_ACT_UNSPEC (-1)

SEC("xdp")
int baseline_xdp(struct xdp_md *ctx)
{
	return XDP_PASS;
}

SEC("tc")
int baseline_tc(struct __sk_buff *skb)
{
	return TC_ACT_UNSPEC;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
