/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The request timers of the ports timed at their service's cgroup
 * (EDGESHED_TIMERS_CGROUP): cgroup_skb programs run for that cgroup's
 * sockets only, so the host's other sockets pay nothing for a send or a
 * receive. They count as the tracepoints do (request_tracker.bpf.h), from
 * the segments instead of the socket calls.
 */
#ifndef EDGESHED_CGROUP_TIMERS_BPF_H
#define EDGESHED_CGROUP_TIMERS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include <edgeshed/abi.h>

#include "parse_types.bpf.h"
#include "request_tracker.bpf.h"

/* Sequence space: a is after b. */
static __always_inline int seq_after(__u32 a, __u32 b)
{
	return (__s32)(a - b) > 0;
}

/* A TCP segment's first sequence number and payload length. */
struct tcp_segment {
	__u32 seq;
	__u32 len;
};

/* Reads the segment of skb, whose data starts at the network header at
 * both cgroup hooks. IPv6 extension headers are not followed: a segment
 * behind one is not timed. */
static __always_inline int tcp_segment_of(struct __sk_buff *skb,
					  struct tcp_segment *seg)
{
	struct tcphdr th;
	__u32 l4, hdr;

	if (skb->protocol == bpf_htons(ETH_P_IP)) {
		struct iphdr ip;

		if (bpf_skb_load_bytes(skb, 0, &ip, sizeof(ip)) ||
		    ip.protocol != IPPROTO_TCP)
			return -1;
		l4 = ip.ihl * 4;
	} else if (skb->protocol == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr ip6;

		if (bpf_skb_load_bytes(skb, 0, &ip6, sizeof(ip6)) ||
		    ip6.nexthdr != IPPROTO_TCP)
			return -1;
		l4 = sizeof(ip6);
	} else {
		return -1;
	}
	if (bpf_skb_load_bytes(skb, l4, &th, sizeof(th)))
		return -1;
	hdr = l4 + th.doff * 4;
	if (skb->len < hdr)
		return -1;
	seg->seq = bpf_ntohl(th.seq);
	seg->len = skb->len - hdr;
	return 0;
}

/* The socket's storage, where skb belongs to a counted connection of a
 * port timed at its cgroup. */
static __always_inline struct edgeshed_sk_state *
cgroup_timed_state(struct __sk_buff *skb, struct tcp_sock **tp)
{
	struct edgeshed_sk_state *st;
	struct bpf_sock *sk = skb->sk;

	if (!sk)
		return NULL;
	*tp = bpf_skc_to_tcp_sock(sk);
	if (!*tp)
		return NULL;
	st = bpf_sk_storage_get(&es_sk_state, *tp, NULL, 0);
	if (!st || !st->counted || !timed_by(st, EDGESHED_TIMERS_CGROUP))
		return NULL;
	return st;
}

/*
 * Ingress runs in tcp_filter(), before the socket lock and before the
 * segment is queued: request bytes are new when the segment is in order
 * and reaches past rcv_nxt (an out-of-order one waits for the hole to
 * fill, a retransmission is behind it). Bytes with a request in service
 * mark the overlap, as at sk_data_ready.
 */
static __always_inline void cgroup_request_bytes(struct __sk_buff *skb)
{
	struct edgeshed_sk_state *st;
	struct tcp_segment seg;
	struct tcp_sock *tp;
	__u32 rcv_nxt;

	st = cgroup_timed_state(skb, &tp);
	if (!st || tcp_segment_of(skb, &seg) || !seg.len)
		return;
	rcv_nxt = tp->rcv_nxt;
	if (seq_after(seg.seq, rcv_nxt) ||
	    !seq_after(seg.seq + seg.len, rcv_nxt))
		return;
	if (st->request_ns) {
		st->overlapped = 1;
		return;
	}
	request_start(st);
}

/*
 * Egress runs inside __tcp_transmit_skb(), before tcp_event_new_data_sent()
 * moves snd_nxt: an answer's first segment is one with a payload at
 * snd_nxt (a retransmission is below it). Its time is the first byte's
 * transmission, so a response held by Nagle or the congestion window
 * counts that wait too.
 */
static __always_inline void cgroup_answer_sent(struct __sk_buff *skb)
{
	struct edgeshed_sk_state *st;
	struct tcp_segment seg;
	struct tcp_sock *tp;

	st = cgroup_timed_state(skb, &tp);
	if (!st || !st->request_ns || tcp_segment_of(skb, &seg) || !seg.len)
		return;
	if (seg.seq == tp->snd_nxt)
		request_answer((struct sock *)tp, st);
}

#endif /* EDGESHED_CGROUP_TIMERS_BPF_H */
