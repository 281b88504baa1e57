/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Idle connections of ports that reclaim them (keepalive = "reclaim" or
 * "refuse"), for the daemon to abort the longest idle first while their
 * class is over its cap: each one reconnects through the SYN's decision
 * when it next has a request. Two iter/tcp walks, so that the choice
 * (controller/law/idle_reclaim.h) is the daemon's:
 *   - the idle walk lists every idle connection with its idle time;
 *   - the reclaim walk aborts those whose cookies the daemon put in
 *     es_reclaim, if they are still idle.
 * The walk holds each socket's lock, so a request cannot arrive between the
 * check and the abort; one arriving after it meets a closed socket and the
 * kernel's RST, unread, which clients retry on a new connection.
 */
#ifndef EDGESHED_RECLAIM_IDLE_BPF_H
#define EDGESHED_RECLAIM_IDLE_BPF_H

#include "counters.bpf.h"
#include "events.bpf.h"
#include "maps.bpf.h"
#include "tcp_iter.bpf.h"

#define NSEC_PER_USEC 1000

/* Linux 6.5; where the kernel lacks it the walks are not loaded. */
extern int bpf_sock_destroy(struct sock_common *sk) __ksym __weak;

/*
 * The tracker's state of an idle connection of a port that reclaims them;
 * NULL for any other socket. Idle: established, no request in service,
 * nothing unread, and everything the server sent acknowledged. A request
 * read and not answered is in service (latency.bpf.h). A connection that
 * ever had bytes arrive with a request in service (pipelining, HTTP/2
 * streams) may have one in service unseen, and is never idle; two requests
 * in one segment, read together, are seen as one.
 */
static __always_inline struct edgeshed_sk_state *
idle_state(struct sock *sk, const struct tcp_sock *tp)
{
	struct edgeshed_sk_state *st;
	struct edgeshed_port *p;
	__u32 key;

	if (sk->__sk_common.skc_state != TCP_ESTABLISHED)
		return NULL;
	st = bpf_sk_storage_get(&es_sk_state, sk, NULL, 0);
	if (!st || !st->counted || st->request_ns || st->overlapped)
		return NULL;
	key = st->port;
	p = bpf_map_lookup_elem(&es_ports, &key);
	if (!p || !(p->protocols & EDGESHED_PORT_TCP) ||
	    p->requests == EDGESHED_REQUESTS_PASS)
		return NULL;
	if (tp->rcv_nxt != tp->copied_seq || tp->snd_una != tp->write_seq)
		return NULL;
	return st;
}

/* Time since the connection's last segment, received or sent: tcp_mstamp
 * is the kernel's TCP clock (CLOCK_MONOTONIC, us) at the latest of them. */
static __always_inline __u64 idle_ns(const struct tcp_sock *tp)
{
	__u64 last = tp->tcp_mstamp * NSEC_PER_USEC, now = bpf_ktime_get_ns();

	return now > last ? now - last : 0;
}

/* A sampled event of a reclaim, from the client's side. */
static __always_inline void emit_reclaim_event(const struct edgeshed_config *cfg,
					       struct sock *sk, __u32 group,
					       int outcome)
{
	struct edgeshed_pkt pkt = {};

	pkt.family = sk->__sk_common.skc_family;
	pkt.sport = bpf_ntohs(sk->__sk_common.skc_dport);
	pkt.dport = sk->__sk_common.skc_num;
	if (pkt.family == AF_INET) {
		pkt.saddr[0] = sk->__sk_common.skc_daddr;
	} else {
		__builtin_memcpy(pkt.saddr,
				 sk->__sk_common.skc_v6_daddr.in6_u.u6_addr32,
				 sizeof(pkt.saddr));
	}
	/* Tracing programs lack the coarse clock; the walk is rare. */
	emit_event(cfg, &pkt, EDGESHED_PROTO_TCP, group, EDGESHED_REASON_IDLE,
		   outcome, bpf_ktime_get_ns());
}

/* The idle walk: one struct edgeshed_idle_conn per idle connection. */
static __always_inline int list_idle(struct bpf_iter__tcp *ctx)
{
	struct edgeshed_idle_conn rec = {};
	struct edgeshed_sk_state *st;
	struct sock *sk = iter_full_sock(ctx);
	struct tcp_sock *tp;

	if (!sk)
		return 0;
	tp = (struct tcp_sock *)sk;
	st = idle_state(sk, tp);
	if (!st)
		return 0;
	rec.cookie = bpf_get_socket_cookie(sk);
	rec.idle_ns = idle_ns(tp);
	rec.port = st->port;
	rec.group = st->group;
	bpf_seq_write(ctx->meta->seq, &rec, sizeof(rec));
	return 0;
}

/* The reclaim walk: aborts each chosen connection that is still idle (in
 * enforce mode; observe mode counts it), and forgets every chosen cookie
 * it meets. */
static __always_inline int reclaim_chosen(struct bpf_iter__tcp *ctx)
{
	struct sock *sk = iter_full_sock(ctx);
	struct edgeshed_sk_state *st;
	struct edgeshed_config *cfg;
	struct sock_common *skc;
	struct edgeshed_stats *s;
	__u32 key = 0, class_id;
	__u64 cookie;

	if (!sk)
		return 0;
	cookie = bpf_get_socket_cookie(sk);
	if (!bpf_map_lookup_elem(&es_reclaim, &cookie))
		return 0;
	bpf_map_delete_elem(&es_reclaim, &cookie);
	st = idle_state(sk, (struct tcp_sock *)sk);
	cfg = bpf_map_lookup_elem(&es_config, &key);
	s = stats_get();
	if (!st || !cfg || !s || cfg->mode == EDGESHED_MODE_OFF)
		return 0;
	if (st->group >= EDGESHED_NUM_GROUPS)
		return 0;
	class_id = edgeshed_group_class(st->group);
	if (cfg->mode != EDGESHED_MODE_ENFORCE) {
		class_count(s, EDGESHED_PROTO_TCP, class_id,
			    EDGESHED_CTR_WOULD_RECLAIM);
		emit_reclaim_event(cfg, sk, st->group,
				   EDGESHED_EVENT_WOULD_RECLAIM);
		return 0;
	}
	/* Before the abort: the event names the client. */
	emit_reclaim_event(cfg, sk, st->group, EDGESHED_EVENT_RECLAIMED);
	/* The walk's own pointer: the kfunc takes a trusted one only. */
	skc = ctx->sk_common;
	if (!skc || bpf_sock_destroy(skc))
		return 0;
	class_count(s, EDGESHED_PROTO_TCP, class_id, EDGESHED_CTR_RECLAIMED);
	return 0;
}

#endif /* EDGESHED_RECLAIM_IDLE_BPF_H */
