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

/* A TCP segment: where its payload starts and how long it is, and who sent
 * it. */
struct tcp_segment {
	__be32 peer[4]; /* the sender's address; IPv4 uses [0] */
	__u32 seq;
	__u32 len;
	__be16 peer_port;
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
		seg->peer[0] = ip.saddr;
	} else if (skb->protocol == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr ip6;

		if (bpf_skb_load_bytes(skb, 0, &ip6, sizeof(ip6)) ||
		    ip6.nexthdr != IPPROTO_TCP)
			return -1;
		l4 = sizeof(ip6);
		__builtin_memcpy(seg->peer, ip6.saddr.in6_u.u6_addr32,
				 sizeof(seg->peer));
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
	seg->peer_port = th.source;
	return 0;
}

/*
 * Request bytes that a segment brought to a listener as it completed the
 * handshake (a server with TCP_DEFER_ACCEPT, or a client's first data
 * carrying its ACK): the connection's socket is made after the listener's
 * filter ran, so its own ingress never sees them. They wait here, per CPU,
 * for the state change that makes that socket, which follows on the same
 * CPU in the same softirq (cgroup_handshake_request()). The data plane's
 * scratch: userspace never reads it.
 */
struct handshake_bytes {
	__be32 peer[4];
	__u32 seq; /* the bytes' start: the new socket's rcv_nxt, or stale */
	__u32 end; /* and end, in sequence space */
	__be16 peer_port;
	__u16 port; /* the listener's, host byte order; 0: none waiting */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct handshake_bytes);
} es_handshake_bytes SEC(".maps");

/* Whether the port is timed at its cgroup. */
static __always_inline int port_timed_at_cgroup(__u16 port)
{
	struct edgeshed_port *p;
	__u32 key = port;

	p = bpf_map_lookup_elem(&es_ports, &key);
	return p && (p->protocols & EDGESHED_PORT_TCP) &&
	       p->timers == EDGESHED_TIMERS_CGROUP;
}

/* A segment to a listener of a port timed at its cgroup: its payload, if
 * any, waits for the connection's socket. */
static __always_inline void listener_bytes(struct __sk_buff *skb, __u16 port)
{
	struct handshake_bytes *hb;
	struct tcp_segment seg;
	__u32 zero = 0;

	if (!port_timed_at_cgroup(port) || tcp_segment_of(skb, &seg) ||
	    !seg.len)
		return;
	hb = bpf_map_lookup_elem(&es_handshake_bytes, &zero);
	if (!hb)
		return;
	__builtin_memcpy(hb->peer, seg.peer, sizeof(hb->peer));
	hb->seq = seg.seq;
	hb->end = seg.seq + seg.len;
	hb->peer_port = seg.peer_port;
	hb->port = port;
}

/* A request enters service: its answer is data written from now on. */
static __always_inline void cgroup_request_start(struct edgeshed_sk_state *st,
						 struct tcp_sock *tp)
{
	st->snd_mark = tp->write_seq;
	request_start(st);
}

/* A connection of a port timed at its cgroup opened: the bytes that
 * completed its handshake, if they wait for it, are its first request. */
static __always_inline void cgroup_handshake_request(struct sock *sk)
{
	struct edgeshed_sk_state *st;
	struct handshake_bytes *hb;
	struct tcp_sock *tp;
	__be32 peer[4] = {};
	__u32 zero = 0;
	__u8 family;

	hb = bpf_map_lookup_elem(&es_handshake_bytes, &zero);
	if (!hb || !hb->port || hb->port != sk->__sk_common.skc_num ||
	    hb->peer_port != sk->__sk_common.skc_dport ||
	    sock_peer(sk, peer, &family))
		return;
	if (hb->peer[0] != peer[0] ||
	    (family == AF_INET6 &&
	     (hb->peer[1] != peer[1] || hb->peer[2] != peer[2] ||
	      hb->peer[3] != peer[3])))
		return;
	hb->port = 0;
	st = bpf_sk_storage_get(&es_sk_state, sk, NULL, 0);
	tp = bpf_skc_to_tcp_sock(sk);
	/* Only the segment being processed starts where the socket's stream
	 * does (not a SYN's data, nor bytes of an earlier attempt). */
	if (!st || !tp || !st->counted || tp->rcv_nxt != hb->seq ||
	    !timed_by(st, EDGESHED_TIMERS_CGROUP))
		return;
	st->rcv_end = hb->end;
	cgroup_request_start(st, tp);
}

/* Marks ahead of what the socket could have (past its receive window, or
 * its writes) are stale: left from a time the port was timed at the
 * tracepoints, which do not move them. */
static __always_inline void fresh_marks(struct edgeshed_sk_state *st,
					struct tcp_sock *tp)
{
	if (seq_after(st->rcv_end, tp->rcv_nxt + tp->rcv_wnd))
		st->rcv_end = tp->copied_seq + tcp_unread((struct sock *)tp);
	if (seq_after(st->snd_mark, tp->write_seq))
		st->snd_mark = tp->snd_una;
}

/* The socket's storage, where skb belongs to a counted connection of a
 * port timed at its cgroup. */
static __always_inline struct edgeshed_sk_state *
cgroup_timed_state(struct bpf_sock *sk, struct tcp_sock **tp)
{
	struct edgeshed_sk_state *st;

	*tp = bpf_skc_to_tcp_sock(sk);
	if (!*tp)
		return NULL;
	st = bpf_sk_storage_get(&es_sk_state, *tp, NULL, 0);
	if (!st || !st->counted || !timed_by(st, EDGESHED_TIMERS_CGROUP))
		return NULL;
	fresh_marks(st, *tp);
	return st;
}

/*
 * Ingress runs in tcp_filter(), before the socket lock and before the
 * segment is queued, or put in the backlog while the server holds the
 * socket: request bytes are new when the segment is in order and reaches
 * past what was seen (rcv_nxt, or the end of a segment still in the
 * backlog; an out-of-order one waits for the hole to fill, a
 * retransmission is behind it). Bytes with a request in service mark the
 * overlap, as at sk_data_ready.
 */
static __always_inline void cgroup_request_bytes(struct __sk_buff *skb)
{
	struct edgeshed_sk_state *st;
	struct bpf_sock *sk = skb->sk;
	struct tcp_segment seg;
	struct tcp_sock *tp;
	__u32 seen, end;

	if (!sk)
		return;
	if (sk->state == BPF_TCP_LISTEN) {
		listener_bytes(skb, sk->src_port);
		return;
	}
	st = cgroup_timed_state(sk, &tp);
	if (!st || tcp_segment_of(skb, &seg) || !seg.len)
		return;
	seen = tp->rcv_nxt;
	if (seq_after(st->rcv_end, seen))
		seen = st->rcv_end;
	end = seg.seq + seg.len;
	/* Past the window, the socket drops the bytes. */
	if (seq_after(seg.seq, seen) || !seq_after(end, seen) ||
	    seq_after(end, tp->rcv_nxt + tp->rcv_wnd))
		return;
	st->rcv_end = end;
	if (st->request_ns) {
		st->overlapped = 1;
		return;
	}
	cgroup_request_start(st, tp);
}

/*
 * Egress runs inside __tcp_transmit_skb(), before tcp_event_new_data_sent()
 * moves snd_nxt: an answer is a segment of new data (at snd_nxt; a
 * retransmission is below it) written after the request arrived (past
 * snd_mark; the rest of an earlier response is not). Its time is the first
 * byte's transmission, so a response held by Nagle or the congestion
 * window counts that wait too. Request bytes seen and not read yet, in the
 * receive queue or the backlog, stay in service (untimed).
 */
static __always_inline void cgroup_answer_sent(struct __sk_buff *skb)
{
	struct edgeshed_sk_state *st;
	struct bpf_sock *sk = skb->sk;
	struct tcp_segment seg;
	struct tcp_sock *tp;
	int pending;

	if (!sk)
		return;
	st = cgroup_timed_state(sk, &tp);
	if (!st || !st->request_ns || tcp_segment_of(skb, &seg) || !seg.len)
		return;
	if (seg.seq != tp->snd_nxt || !seq_after(seg.seq + seg.len, st->snd_mark))
		return;
	pending = tcp_unread((struct sock *)tp) ||
		  seq_after(st->rcv_end, tp->copied_seq);
	request_answer(st, pending);
	st->snd_mark = tp->write_seq;
}

#endif /* EDGESHED_CGROUP_TIMERS_BPF_H */
