/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Latency measured on the server's sockets of protected ports, into the
 * per-CPU log-linear histograms of es_latency (layout in abi.h).
 */
#ifndef EDGESHED_LATENCY_BPF_H
#define EDGESHED_LATENCY_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <edgeshed/abi.h>

#include "maps.bpf.h"

/*
 * Counts one sample of a connection in its port's histogram. The histograms
 * are per CPU and updated without atomics: only a recording program
 * interrupted on its CPU by another recording program (softirq over process
 * context) can lose an increment.
 */
static __always_inline void latency_record(const struct edgeshed_sk_state *st,
					   __u32 measure, __u64 ns)
{
	struct edgeshed_latency_owner *owner;
	struct edgeshed_latency_slot *s;
	struct edgeshed_latency_hist *h;
	__u32 key = st->latency_slot, b;

	if (measure >= EDGESHED_NUM_LATENCY_MEASURES)
		return;
	/* EDGESHED_LATENCY_NO_SLOT is past the arrays: not measured. The
	 * slot was the port's when the connection opened; if the port table
	 * has given it to another port since, the sample is not that port's. */
	owner = bpf_map_lookup_elem(&es_latency_ports, &key);
	if (!owner || !owner->in_use || owner->port != st->port ||
	    owner->service != edgeshed_group_service(st->group))
		return;
	s = bpf_map_lookup_elem(&es_latency, &key);
	if (!s)
		return;
	b = edgeshed_latency_bucket(ns);
	/* clang knows b is in range and drops the check the verifier needs. */
	barrier_var(b);
	if (b >= EDGESHED_LATENCY_BUCKETS)
		return;
	h = &s->measure[measure];
	h->count++;
	h->sum_ns += ns;
	h->buckets[b]++;
}

/*
 * Bytes a read would return now: sequence space received in order but not
 * yet read, less the FIN's one (as tcp_inq() counts). Zero for a FIN-only
 * or empty arrival, which must not start a request.
 */
static __always_inline __u32 tcp_unread(struct sock *sk)
{
	struct tcp_sock *tp = bpf_skc_to_tcp_sock(sk);
	__u32 n;

	if (!tp)
		return 0;
	n = tp->rcv_nxt - tp->copied_seq;
	if (n && (sk->__sk_common.skc_flags & (1ul << SOCK_DONE)))
		n--;
	return n;
}

/*
 * Data arrived and the server has sent nothing since: a request it has
 * read, or is reading, and not answered. What the seed walk finds of a
 * request older than the tracker; the tracker itself sees each arrival.
 * A connection that never sent is plain; else the times are the kernel's
 * jiffies, and an arrival in the jiffy of the last send counts as answered.
 */
static __always_inline int read_unanswered(struct sock *sk)
{
	struct tcp_sock *tp = bpf_skc_to_tcp_sock(sk);

	if (!tp || !tp->bytes_received)
		return 0;
	if (!tp->bytes_sent)
		return 1;
	return (__s32)(tp->inet_conn.icsk_ack.lrcvtime - tp->lsndtime) > 0;
}

/* A server's close: it sends its FIN first (ESTABLISHED -> FIN_WAIT1) or
 * answers the client's (CLOSE_WAIT -> LAST_ACK). */
static __always_inline int server_close(int oldstate, int newstate)
{
	return (oldstate == TCP_ESTABLISHED && newstate == TCP_FIN_WAIT1) ||
	       (oldstate == TCP_CLOSE_WAIT && newstate == TCP_LAST_ACK);
}

/* Connection time, once per connection (the mark also keeps an old and a
 * new tracker, side by side during an upgrade, from counting it twice). */
static __always_inline void measure_close(struct edgeshed_sk_state *st)
{
	if (!st->established_ns || st->close_measured)
		return;
	st->close_measured = 1;
	latency_record(st, EDGESHED_LATENCY_CONNECTION,
		       bpf_ktime_get_ns() - st->established_ns);
}

#endif /* EDGESHED_LATENCY_BPF_H */
