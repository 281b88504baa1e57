/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The socket tracker: connections of protected ports and the requests in
 * service on them, counted as they open, receive, answer and close (the
 * programs are in edgeshed.bpf.c; the counts' meaning in abi.h).
 */
#ifndef EDGESHED_REQUEST_TRACKER_BPF_H
#define EDGESHED_REQUEST_TRACKER_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <edgeshed/abi.h>

#include "classify.bpf.h"
#include "latency.bpf.h"
#include "maps.bpf.h"
#include "queue_age.bpf.h"
#include "rst_policy.bpf.h"
#include "service.bpf.h"
#include "tcp_iter.bpf.h"

/* A v4 client on a dual-stack listener shows up as ::ffff:a.b.c.d. */
static __always_inline int v4_mapped(const __be32 *a)
{
	return a[0] == 0 && a[1] == 0 && a[2] == bpf_htonl(0x0000ffff);
}

/* The client's address of a connection (IPv4 in peer[0], a v4-mapped one
 * too) and its family; -1 for a socket of another family. */
static __always_inline int sock_peer(struct sock *sk, __be32 peer[4],
				     __u8 *family)
{
	*family = sk->__sk_common.skc_family;
	if (*family == AF_INET) {
		peer[0] = sk->__sk_common.skc_daddr;
		return 0;
	}
	if (*family != AF_INET6)
		return -1;
	__builtin_memcpy(peer, sk->__sk_common.skc_v6_daddr.in6_u.u6_addr32,
			 4 * sizeof(peer[0]));
	if (v4_mapped(peer)) {
		*family = AF_INET;
		peer[0] = peer[3];
	}
	return 0;
}

/* Whether a socket of namespace `inum` is the port's service: the port's
 * own namespace where it names one (a container's), else the interface's;
 * 0 in both: any. */
static __always_inline int port_netns_ours(const struct edgeshed_config *cfg,
					   const struct edgeshed_port *p,
					   __u32 inum)
{
	__u32 want = p->netns_ino ? p->netns_ino : cfg->netns_ino;

	return !want || inum == want;
}

/* What the tracker finds of a passively opened socket of a protected port. */
struct tracked_sock {
	const struct edgeshed_config *cfg;
	__be32 peer[4]; /* the client's address; IPv4 uses [0] */
	__u8 family;	/* the client's: AF_INET for a v4-mapped one */
	__u8 latency_slot;
	__u32 group; /* its service's class, found as the SYN's was */
};

/* The entry of the service a socket of the protected port `p` is of: the
 * port's where it has one service, if the socket is in its namespace;
 * NULL where the socket is no service's. */
static __always_inline struct edgeshed_port *
socket_service(struct sock *sk, const struct edgeshed_config *cfg,
	       struct edgeshed_port *p, __u16 port)
{
	struct net *net = sk->__sk_common.skc_net.net;

	if (p->service == EDGESHED_SERVICE_BY_NETNS)
		return service_entry(p, port, net->net_cookie);
	/* The tracepoint fires for every namespace of the host; a service on
	 * the same port elsewhere is not ours to count. */
	return port_netns_ours(cfg, p, net->ns.inum) ? p : NULL;
}

/* Fills t for a socket of a protected port; -1 for any other socket. */
static __always_inline int socket_group(struct sock *sk, __u16 port,
					struct tracked_sock *t)
{
	const struct edgeshed_config *cfg;
	struct edgeshed_port *p, *svc;
	__u32 key = port;

	p = bpf_map_lookup_elem(&es_ports, &key);
	if (!p || !(p->protocols & EDGESHED_PORT_TCP))
		return -1;
	key = 0;
	cfg = bpf_map_lookup_elem(&es_config, &key);
	if (!cfg)
		return -1;
	svc = socket_service(sk, cfg, p, port);
	if (!svc || sock_peer(sk, t->peer, &t->family))
		return -1;
	t->cfg = cfg;
	t->latency_slot = svc->latency_slot;
	t->group = service_group(svc, classify_source(cfg, t->family, t->peer,
						      svc->class_id));
	return t->group < EDGESHED_NUM_GROUPS ? 0 : -1;
}

/* Adds d to a live count of the port and of the group (see abi.h). */
static __always_inline __u64 live_add(void *port_map, void *group_map,
				      __u16 port, __u32 group, __s64 d)
{
	__u32 key = port;
	__u64 *v;

	v = bpf_map_lookup_elem(port_map, &key);
	if (v)
		__sync_fetch_and_add(v, d);
	v = bpf_map_lookup_elem(group_map, &group);
	return v ? __sync_fetch_and_add(v, d) + d : 0;
}

/*
 * A request enters service on a connection that had none. The peak is a
 * plain store: two CPUs racing may keep the lower of their two counts for
 * this tick, which the next request corrects.
 */
static __always_inline void request_enter(struct edgeshed_sk_state *st,
					  __u64 at)
{
	__u32 group = st->group;
	__u64 now, *peak;

	age_enter(st->port, group, at);
	now = live_add(&es_inflight, &es_inflight_cls, st->port, group, 1);
	peak = bpf_map_lookup_elem(&es_inflight_peak, &group);
	if (peak && now > *peak)
		*peak = now;
}

/* The connection's request in service, if any, leaves service untimed: the
 * server is done with the connection without an answer. */
static __always_inline void request_drop(struct edgeshed_sk_state *st)
{
	__u64 start = __sync_lock_test_and_set(&st->request_ns, 0);

	if (!start)
		return;
	live_add(&es_inflight, &es_inflight_cls, st->port, st->group, -1);
	age_leave(st->port, st->group, start);
}

/* Whether st's port is timed by `timers` (enum edgeshed_port_timers);
 * EDGESHED_NUM_PORT_TIMERS: by whoever asks (the seed walk). */
static __always_inline int timed_by(const struct edgeshed_sk_state *st,
				    __u32 timers)
{
	struct edgeshed_port *p;
	__u32 key = st->port;

	if (timers == EDGESHED_NUM_PORT_TIMERS)
		return 1;
	p = bpf_map_lookup_elem(&es_ports, &key);
	return p && p->timers == timers;
}

/* A request enters service on a connection with none in service. */
static __always_inline void request_start(struct edgeshed_sk_state *st)
{
	__u64 now = bpf_ktime_get_ns();

	if (st->request_ns)
		return;
	/* Counted before it is stamped: an exit (an answer, a close) takes the
	 * stamp first, so it never passes the entry, not even from another
	 * CPU (the cgroup timers' ingress runs without the socket lock). */
	request_enter(st, now);
	if (__sync_val_compare_and_swap(&st->request_ns, 0, now) == 0) {
		st->untimed = 0;
		return;
	}
	/* Another tracker stamped it first (an upgrade runs two at once). */
	live_add(&es_inflight, &es_inflight_cls, st->port, st->group, -1);
	age_leave(st->port, st->group, now);
}

/*
 * A request enters service when request bytes are queued for the server on a
 * tracked connection that has none in service (see abi.h). Every path here
 * and in the tracker runs under the socket's lock (softirq receive, the
 * owner's sends and state changes, the iterator), so the atomics only keep
 * each count exact against a second tracker during an upgrade.
 */
static __always_inline void request_arrived(struct sock *sk, int read_too,
					    __u32 timers)
{
	struct edgeshed_sk_state *st;

	st = bpf_sk_storage_get(&es_sk_state, sk, NULL, 0);
	if (!st || !st->counted || !timed_by(st, timers))
		return;
	if (st->request_ns) {
		/* A FIN, or bytes the server already read, is no overlap. */
		if (!read_too && tcp_unread(sk))
			st->overlapped = 1;
		return;
	}
	if (!tcp_unread(sk) && !(read_too && read_unanswered(sk)))
		return;
	request_start(st);
}

/* The cgroup timers' marks (abi.h) of a connection they have not seen
 * before: every byte received so far seen, every byte sent answered. */
static __always_inline void stream_marks(struct sock *sk,
					 struct edgeshed_sk_state *st)
{
	struct tcp_sock *tp = bpf_skc_to_tcp_sock(sk);

	if (!tp)
		return;
	st->rcv_end = tp->copied_seq + tcp_unread(sk);
	/* What is written and not sent yet may be the answer of a request
	 * the seed walk finds read and unanswered. */
	st->snd_mark = tp->snd_nxt;
}

/*
 * Counts a connection of a protected port, once: it may be counted
 * already while an upgrade runs old and new tracker side by side, or when
 * the seed walk meets a connection the tracker counted. Its storage keeps
 * what uncounting it needs. A seeded socket's open is unknown
 * (established_ns 0: no connection time).
 */
static __always_inline void count_socket(struct sock *sk, int opened_now)
{
	struct tracked_sock t = {};
	struct edgeshed_sk_state *st;
	__u16 port = sk->__sk_common.skc_num;

	if (socket_group(sk, port, &t))
		return;
	st = bpf_sk_storage_get(&es_sk_state, sk, NULL,
				BPF_SK_STORAGE_GET_F_CREATE);
	if (!st || st->counted)
		return;
	st->port = port;
	st->group = t.group;
	st->latency_slot = t.latency_slot;
	stream_marks(sk, st);
	st->counted = 1;
	live_add(&es_conns, &es_conns_cls, port, t.group, 1);
	if (opened_now) {
		st->established_ns = bpf_ktime_get_ns();
		reflect_credit(t.cfg, t.family, t.peer, st->established_ns);
	}
}

/*
 * Connections: established on a protected port, accepted or still in the
 * accept queue. A connection is counted when its passive open
 * completes and uncounted when the server is done with it: when it leaves
 * ESTABLISHED for any state but CLOSE_WAIT (the server closed first, or a
 * reset), or when it leaves CLOSE_WAIT (the server closed after the client's
 * FIN). A client that half-closes (shutdown(SHUT_WR)) after its request
 * keeps its slot while the server works on it. Counting until TCP_CLOSE
 * would keep FIN_WAIT2 orphans in the count for up to tcp_fin_timeout. The
 * mark in socket storage makes the pair exact even if the port's class is
 * edited in between.
 *
 * Connection time ends at the server's close (server_close()), not at
 * ESTABLISHED -> CLOSE: that one is a reset, sent by the client (its abort
 * or timeout, not the server's answer) or by a listener closing with
 * connections still queued, and would mix those into the service's time.
 */
static __always_inline void track_state_change(struct sock *sk, int oldstate,
					       int newstate)
{
	struct edgeshed_sk_state *st;

	if (sk->sk_protocol != IPPROTO_TCP)
		return;

	if (oldstate == TCP_SYN_RECV && newstate == TCP_ESTABLISHED) {
		count_socket(sk, 1);
		return;
	}

	if (oldstate != TCP_ESTABLISHED && oldstate != TCP_CLOSE_WAIT)
		return;
	st = bpf_sk_storage_get(&es_sk_state, sk, NULL, 0);
	if (!st)
		return;
	if (server_close(oldstate, newstate))
		measure_close(st);
	if (st->counted &&
	    (oldstate == TCP_CLOSE_WAIT || newstate != TCP_CLOSE_WAIT)) {
		st->counted = 0;
		live_add(&es_conns, &es_conns_cls, st->port, st->group, -1);
		/* No request enters service once the mark is off. */
		request_drop(st);
	}
}

/*
 * Seeds the in-flight counts with the connections established before the
 * tracker was attached, which it never saw open: run once by attach (and
 * adoption, where it finds them all counted) after the tracker is linked,
 * so a connection opening meanwhile is counted by one or the other, never
 * both or neither. The walk holds each socket's lock, as every state change
 * does, and skips sockets already unhashed, so one closing meanwhile is not
 * counted after its uncount. Their open is unknown: they give response
 * times, but no connection time (established_ns 0). A request still unread,
 * or read and not answered (read_unanswered()), enters service now.
 */
static __always_inline void seed_socket(struct sock *sk)
{
	if (sk->__sk_common.skc_state == TCP_ESTABLISHED ||
	    sk->__sk_common.skc_state == TCP_CLOSE_WAIT) {
		count_socket(sk, 0);
		request_arrived(sk, 1, EDGESHED_NUM_PORT_TIMERS);
	}
}

/*
 * Request arrival: data queued on a tracked connection. sock_def_readable()
 * runs this for sockets still in the accept queue too, so a lazy accept()
 * counts in the response time and in service. Every socket of the host
 * passes here: anything but a tracked TCP socket leaves at the first two
 * checks. A connection the server is done with has lost its mark (a client
 * that half-closes after its request keeps it: CLOSE_WAIT). Needs Linux 6.6.
 */

/*
 * The server answers: its first send on a connection with a request in
 * service ends the request and gives the response time.
 * tcp_sendmsg_locked() is where write(), send() and sendfile()/splice()
 * (MSG_SPLICE_PAGES since Linux 6.5) all copy into the socket, under the
 * socket lock and before the copy, so the time is the first byte's even when
 * a large send then waits for buffer space; and only TCP sends pay for this
 * program. The tracepoint needs Linux 6.11. A pipelined request that arrived
 * before this send and is still unread stays in service, untimed: its
 * arrival was not seen on its own.
 */
static __always_inline void request_answer(struct edgeshed_sk_state *st,
					   int pending)
{
	__u64 start, now;

	now = bpf_ktime_get_ns();
	if (pending) {
		start = __sync_lock_test_and_set(&st->request_ns, now);
		if (!start)
			return;
		if (!st->untimed)
			latency_record(st, EDGESHED_LATENCY_RESPONSE,
				       now - start);
		st->untimed = 1;
		/* The next request's own entry is unseen: it ages from now. */
		age_leave(st->port, st->group, start);
		age_enter(st->port, st->group, now);
		return;
	}
	start = __sync_lock_test_and_set(&st->request_ns, 0);
	if (!start)
		return;
	if (!st->untimed)
		latency_record(st, EDGESHED_LATENCY_RESPONSE, now - start);
	live_add(&es_inflight, &es_inflight_cls, st->port, st->group, -1);
	age_leave(st->port, st->group, start);
}

static __always_inline void request_answered(struct sock *sk, __u32 timers)
{
	struct edgeshed_sk_state *st;

	st = bpf_sk_storage_get(&es_sk_state, sk, NULL, 0);
	if (st && st->request_ns && timed_by(st, timers))
		request_answer(st, tcp_unread(sk) != 0);
}

#endif /* EDGESHED_REQUEST_TRACKER_BPF_H */
