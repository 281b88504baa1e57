/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The XDP program that was on the interface before edgeshed: edgeshed takes
 * its place and hands every frame it passes on to it, as katran's root array
 * does. A tail call needs no freplace, which libxdp's dispatcher does and
 * some kernels refuse. The controller fills and empties the slot
 * (dataplane/xdp_chain.h).
 */
#ifndef EDGESHED_XDP_CHAIN_BPF_H
#define EDGESHED_XDP_CHAIN_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} es_xdp_next SEC(".maps");

/* An empty slot is a failed tail call, and the frame passes as before. A
 * device-bound program may tail-call; only the program in the slot may not
 * be bound to a device (the kernel refuses it into a program array). */
static __always_inline int xdp_pass_on(struct xdp_md *ctx, int action)
{
	if (action == XDP_PASS)
		bpf_tail_call(ctx, &es_xdp_next, 0);
	return action;
}

#endif /* EDGESHED_XDP_CHAIN_BPF_H */
