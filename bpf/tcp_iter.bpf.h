/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* What the iter/tcp walks (accept queue, in-flight seed) look at. */
#ifndef EDGESHED_TCP_ITER_BPF_H
#define EDGESHED_TCP_ITER_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

/* The walk's socket as a full one, or NULL for request and time-wait
 * sockets, which are not. */
static __always_inline struct sock *iter_full_sock(struct bpf_iter__tcp *ctx)
{
	struct sock_common *skc = ctx->sk_common;
	struct tcp_sock *tp;

	if (!skc)
		return NULL;
	tp = bpf_skc_to_tcp_sock(skc);
	return tp ? (struct sock *)tp : NULL;
}

#endif /* EDGESHED_TCP_ITER_BPF_H */
