// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Accept-queue depth and sojourn time of the protected ports, read each tick
 * by iterating over TCP sockets: the queueing delay a service imposes before
 * it even sees a connection, measured without its cooperation.
 *
 * An established child socket that has no struct socket yet has not been
 * accepted: it waits in its listener's queue. Its age comes from the
 * timestamp the data plane's tracker stamped when the handshake completed
 * (es_sk_state, reused from the pinned data plane). fentry/kprobes are not
 * needed, which matters on hosts that lack them.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "shared_maps.bpf.h"
#include "tcp_iter.bpf.h"

#define TCP_LISTEN_STATE 10

static __always_inline int protected_port(__u16 port)
{
	__u32 key = port;
	struct edgeshed_port *p = bpf_map_lookup_elem(&es_ports, &key);

	return p && (p->protocols & EDGESHED_PORT_TCP);
}

SEC("iter/tcp")
int edgeshed_accept_queue(struct bpf_iter__tcp *ctx)
{
	struct sock *sk = iter_full_sock(ctx);
	struct edgeshed_aq_record rec = {};
	struct edgeshed_sk_state *st;

	if (!sk)
		return 0;
	rec.port = sk->__sk_common.skc_num;
	if (!protected_port(rec.port))
		return 0;

	if (sk->__sk_common.skc_state == TCP_LISTEN_STATE) {
		rec.kind = EDGESHED_AQ_LISTENER;
		rec.depth = sk->sk_ack_backlog;
		rec.max_depth = sk->sk_max_ack_backlog;
		bpf_seq_write(ctx->meta->seq, &rec, sizeof(rec));
		return 0;
	}
	if (sk->sk_socket)
		return 0; /* accepted */
	st = bpf_sk_storage_get(&es_sk_state, sk, NULL, 0);
	if (!st || !st->counted)
		return 0; /* not a connection the tracker saw established */
	rec.kind = EDGESHED_AQ_WAITING;
	rec.waiting_ns = bpf_ktime_get_ns() - st->established_ns;
	bpf_seq_write(ctx->meta->seq, &rec, sizeof(rec));
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
