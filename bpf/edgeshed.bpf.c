// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * edgeshed data plane: admit or shed each new TCP connection (SYN) and QUIC
 * connection (Initial) to a protected port, at XDP or TC ingress, and keep
 * the live counts of requests in service and of established connections
 * that the caps compare against.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "decide.bpf.h"
#include "latency.bpf.h"
#include "maps.bpf.h"
#include "parse.bpf.h"
#include "reclaim_idle.bpf.h"
#include "rst.bpf.h"
#include "tcp_iter.bpf.h"
#include "xdp_chain.bpf.h"
#include "xdp_vlan.bpf.h"

#define TC_ACT_UNSPEC (-1)
#define TC_ACT_SHOT 2
#include "refuse_request.bpf.h"
/* The most of a frame the TC program pulls into the linear area when its
 * headers go on past it: as far as the parser walks (four tags, six IPv6
 * extension headers of up to 2,048 bytes each, TCP with options). */
#define TC_PULL_MAX 16384

/* Decides on what the parser found; fills class_id for the RST path. */
static __always_inline int edgeshed_verdict(int parsed, struct edgeshed_pkt *pkt,
					    void *data, void *data_end,
					    __u32 *class_id)
{
	if (parsed == EDGESHED_PARSE_SYN)
		return edgeshed_decide(pkt, data, data_end, class_id);
	return undecided_verdict(parsed, pkt);
}

static __always_inline void count_rst(__u32 class_id, int sent)
{
	struct edgeshed_stats *s = stats_get();

	if (!s)
		return;
	if (sent)
		class_count(s, EDGESHED_PROTO_TCP, class_id,
			    EDGESHED_CTR_RST_SENT);
	else
		s->global[EDGESHED_GCTR_RST_FAILED]++;
}

/*
 * The second stage of a UDP datagram, in global functions: the verifier
 * checks each once, with pkt's offsets unknown, and not again for every
 * path through the parser that leads to it.
 */
__noinline int edgeshed_quic_xdp(struct xdp_md *ctx, struct edgeshed_pkt *pkt)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;

	if (!pkt)
		return EDGESHED_VERDICT_PASS;
	return edgeshed_quic_verdict(data, data_end, pkt);
}

/* Pulls the UDP and long headers into the linear part first, when they are
 * not. */
__noinline int edgeshed_quic_tc(struct __sk_buff *skb, struct edgeshed_pkt *pkt)
{
	void *data_end, *data;
	__u32 want, skb_len;

	if (!pkt)
		return EDGESHED_VERDICT_PASS;
	skb_len = skb->len;
	want = pkt->l4_off + sizeof(struct udphdr) + QUIC_LONG_HEADER_MAX;
	if (want > skb_len)
		want = skb_len;
	data_end = (void *)(long)skb->data_end;
	data = (void *)(long)skb->data;
	/* Past the bound, edgeshed_quic_verdict() reads nothing. */
	if (pkt->l4_off <= EDGESHED_MAX_UDP_OFF && data + want > data_end) {
		bpf_skb_pull_data(skb, want);
		data_end = (void *)(long)skb->data_end;
		data = (void *)(long)skb->data;
	}
	return edgeshed_quic_verdict(data, data_end, pkt);
}

/* Refuses a SYN at XDP: the frame becomes its RST, tagged as it came. */
static __always_inline int xdp_refuse(struct xdp_md *ctx, void *data,
				      void *data_end, struct edgeshed_pkt *pkt,
				      __u32 class_id, int dev_bound)
{
	struct rx_vlan tag = {};
	int len, stripped;

	stripped = stripped_vlan(ctx, dev_bound, &tag);
	if (stripped == STRIPPED_UNKNOWN) {
		struct edgeshed_stats *s = stats_get();

		if (s)
			s->global[EDGESHED_GCTR_RST_VLAN_UNKNOWN]++;
		return XDP_DROP;
	}
	len = edgeshed_write_rst(data, data_end, pkt);
	if (len < 0 || bpf_xdp_adjust_tail(ctx, len - (int)(data_end - data)) ||
	    (stripped == STRIPPED_TAG && push_vlan_tag(ctx, &tag))) {
		count_rst(class_id, 0);
		return XDP_DROP;
	}
	count_rst(class_id, 1);
	return XDP_TX;
}

static __always_inline int xdp_entry(struct xdp_md *ctx, int dev_bound)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct edgeshed_pkt pkt = {};
	__u32 class_id = 0;
	int parsed;

	parsed = edgeshed_parse(data, data_end, data_end - data, &pkt);
	if (parsed == EDGESHED_PARSE_UDP)
		return edgeshed_quic_xdp(ctx, &pkt) == EDGESHED_VERDICT_DROP ?
			       XDP_DROP :
			       XDP_PASS;
	switch (edgeshed_verdict(parsed, &pkt, data, data_end, &class_id)) {
	case EDGESHED_VERDICT_DROP:
		return XDP_DROP;
	case EDGESHED_VERDICT_RST:
		return xdp_refuse(ctx, data, data_end, &pkt, class_id, dev_bound);
	default:
		return XDP_PASS;
	}
}

SEC("xdp")
int edgeshed_xdp(struct xdp_md *ctx)
{
	return xdp_pass_on(ctx, xdp_entry(ctx, 0));
}

/* The same, bound to the device at load (native XDP on Linux 6.8 and later),
 * so that it may ask the driver for the VLAN tag it stripped. */
SEC("xdp")
int edgeshed_xdp_dev(struct xdp_md *ctx)
{
	return xdp_pass_on(ctx, xdp_entry(ctx, 1));
}

/*
 * Takes the SYN's IP options or IPv6 extension headers out, so that the
 * RST's TCP header lands where the SYN's was: a local or veth sender's skb
 * keeps its transport header and checksum offsets there, below which
 * neither bpf_skb_change_tail() nor the receiver's trim will cut it.
 */
static __always_inline int tc_drop_ip_extras(struct __sk_buff *skb,
					     const struct edgeshed_pkt *pkt)
{
	__u32 base = pkt->family == AF_INET ? sizeof(struct iphdr) :
					      sizeof(struct ipv6hdr);

	if (pkt->l4_off <= pkt->l3_off + base)
		return 0;
	return bpf_skb_adjust_room(skb, -(__s32)(pkt->l4_off - pkt->l3_off - base),
				   BPF_ADJ_ROOM_NET, 0);
}

SEC("tc")
int edgeshed_tc(struct __sk_buff *skb)
{
	struct edgeshed_pkt pkt = {};
	__u32 class_id = 0, want, skb_len, pkt_type;
	void *data_end, *data;
	int len, parsed;

	/* Read once, here: clang would otherwise merge the two loads into one
	 * at a computed offset, and the verifier refuses a moved ctx pointer. */
	skb_len = skb->len;
	pkt_type = skb->pkt_type;
	barrier_var(skb_len);
	barrier_var(pkt_type);
	data_end = (void *)(long)skb->data_end;
	data = (void *)(long)skb->data;
	/* Lengths are the skb's, which may reach past the linear part. Only
	 * headers that are not all in the linear part pay for a pull. */
	parsed = edgeshed_parse(data, data_end, skb_len, &pkt);
	want = skb_len < TC_PULL_MAX ? skb_len : TC_PULL_MAX;
	if (parsed == EDGESHED_PARSE_UNPARSED && data + want > data_end) {
		bpf_skb_pull_data(skb, want);
		data_end = (void *)(long)skb->data_end;
		data = (void *)(long)skb->data;
		/* From scratch: whatever the first pass left in pkt would make
		 * each of its paths a state of its own for the verifier. */
		__builtin_memset(&pkt, 0, sizeof(pkt));
		parsed = edgeshed_parse(data, data_end, skb_len, &pkt);
	}
	pkt.at_tc = 1;
	pkt.tc_to_host = pkt_type == PACKET_HOST;
	if (parsed == EDGESHED_PARSE_UDP)
		return edgeshed_quic_tc(skb, &pkt) == EDGESHED_VERDICT_DROP ?
			       TC_ACT_SHOT :
			       TC_ACT_UNSPEC;

	switch (edgeshed_verdict(parsed, &pkt, data, data_end, &class_id)) {
	case EDGESHED_VERDICT_DROP:
		return TC_ACT_SHOT;
	case EDGESHED_VERDICT_RST:
		/* Where it cannot (over 4 KiB of them, or a tag still in the
		 * frame), the trim may still do: the sender set no offsets. */
		tc_drop_ip_extras(skb, &pkt);
		data_end = (void *)(long)skb->data_end;
		data = (void *)(long)skb->data;
		len = edgeshed_write_rst(data, data_end, &pkt);
		if (len < 0 || bpf_skb_change_tail(skb, len, 0)) {
			count_rst(class_id, 0);
			return TC_ACT_SHOT;
		}
		count_rst(class_id, 1);
		/* Back out of the device it came in on, towards the client. */
		return bpf_redirect(skb->ifindex, 0);
	default:
		/* Unspec, not OK: other ingress filters still get their say. */
		return TC_ACT_UNSPEC;
	}
}

/*
 * New requests on open connections (refuse_request.bpf.h), at TC ingress
 * beside either hook: attached only while a port refuses them.
 */
SEC("tc")
int edgeshed_refuse(struct __sk_buff *skb)
{
	return edgeshed_request_verdict(skb);
}

/* A v4 client on a dual-stack listener shows up as ::ffff:a.b.c.d. */
static __always_inline int v4_mapped(const __be32 *a)
{
	return a[0] == 0 && a[1] == 0 && a[2] == bpf_htonl(0x0000ffff);
}

/* What the tracker finds of a passively opened socket of a protected port. */
struct tracked_sock {
	const struct edgeshed_config *cfg;
	__be32 peer[4]; /* the client's address; IPv4 uses [0] */
	__u8 family;	/* the client's: AF_INET for a v4-mapped one */
	__u8 latency_slot;
	__u32 class_id; /* found as the SYN's was */
};

/* Fills t for a socket of a protected port; -1 for any other socket. */
static __always_inline int socket_class(struct sock *sk, __u16 port,
					struct tracked_sock *t)
{
	const struct edgeshed_config *cfg;
	struct edgeshed_port *p;
	__u32 key = port;

	p = bpf_map_lookup_elem(&es_ports, &key);
	if (!p || !(p->protocols & EDGESHED_PORT_TCP))
		return -1;
	key = 0;
	cfg = bpf_map_lookup_elem(&es_config, &key);
	if (!cfg)
		return -1;
	/* The tracepoint fires for every namespace of the host; a service on
	 * the same port elsewhere is not ours to count. */
	if (cfg->netns_ino &&
	    sk->__sk_common.skc_net.net->ns.inum != cfg->netns_ino)
		return -1;
	t->family = sk->__sk_common.skc_family;
	if (t->family == AF_INET) {
		t->peer[0] = sk->__sk_common.skc_daddr;
	} else if (t->family == AF_INET6) {
		__builtin_memcpy(t->peer,
				 sk->__sk_common.skc_v6_daddr.in6_u.u6_addr32,
				 sizeof(t->peer));
		if (v4_mapped(t->peer)) {
			t->family = AF_INET;
			t->peer[0] = t->peer[3];
		}
	} else {
		return -1;
	}
	t->cfg = cfg;
	t->latency_slot = p->latency_slot;
	t->class_id = classify_source(cfg, t->family, t->peer, p->class_id);
	return t->class_id < EDGESHED_NUM_CLASSES ? 0 : -1;
}

/* Adds d to a live count of the port and of the class (see abi.h). */
static __always_inline __u64 live_add(void *port_map, void *class_map,
				      __u16 port, __u32 class_id, __s64 d)
{
	__u32 key = port;
	__u64 *v;

	v = bpf_map_lookup_elem(port_map, &key);
	if (v)
		__sync_fetch_and_add(v, d);
	v = bpf_map_lookup_elem(class_map, &class_id);
	return v ? __sync_fetch_and_add(v, d) + d : 0;
}

/*
 * A request enters service on a connection that had none. The peak is a
 * plain store: two CPUs racing may keep the lower of their two counts for
 * this tick, which the next request corrects.
 */
static __always_inline void request_enter(struct edgeshed_sk_state *st)
{
	__u32 class_id = st->class_id;
	__u64 now, *peak;

	now = live_add(&es_inflight, &es_inflight_cls, st->port, class_id, 1);
	peak = bpf_map_lookup_elem(&es_inflight_peak, &class_id);
	if (peak && now > *peak)
		*peak = now;
}

/* The connection's request in service, if any, leaves service untimed: the
 * server is done with the connection without an answer. */
static __always_inline void request_drop(struct edgeshed_sk_state *st)
{
	if (__sync_lock_test_and_set(&st->request_ns, 0))
		live_add(&es_inflight, &es_inflight_cls, st->port, st->class_id,
			 -1);
}

/*
 * A request enters service when request bytes are queued for the server on a
 * tracked connection that has none in service (see abi.h). Every path here
 * and in the tracker runs under the socket's lock (softirq receive, the
 * owner's sends and state changes, the iterator), so the atomics only keep
 * each count exact against a second tracker during an upgrade.
 */
static __always_inline void request_arrived(struct sock *sk, int read_too)
{
	struct edgeshed_sk_state *st;

	st = bpf_sk_storage_get(&es_sk_state, sk, NULL, 0);
	if (!st || !st->counted)
		return;
	if (st->request_ns) {
		/* A FIN, or bytes the server already read, is no overlap. */
		if (!read_too && tcp_unread(sk))
			st->overlapped = 1;
		return;
	}
	if (!tcp_unread(sk) && !(read_too && read_unanswered(sk)))
		return;
	if (__sync_val_compare_and_swap(&st->request_ns, 0,
					bpf_ktime_get_ns()) == 0) {
		st->untimed = 0;
		request_enter(st);
	}
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

	if (socket_class(sk, port, &t))
		return;
	st = bpf_sk_storage_get(&es_sk_state, sk, NULL,
				BPF_SK_STORAGE_GET_F_CREATE);
	if (!st || st->counted)
		return;
	st->port = port;
	st->class_id = t.class_id;
	st->latency_slot = t.latency_slot;
	st->counted = 1;
	live_add(&es_conns, &es_conns_cls, port, t.class_id, 1);
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
SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(edgeshed_track, struct sock *sk, int oldstate, int newstate)
{
	struct edgeshed_sk_state *st;

	if (sk->sk_protocol != IPPROTO_TCP)
		return 0;

	if (oldstate == TCP_SYN_RECV && newstate == TCP_ESTABLISHED) {
		count_socket(sk, 1);
		return 0;
	}

	if (oldstate != TCP_ESTABLISHED && oldstate != TCP_CLOSE_WAIT)
		return 0;
	st = bpf_sk_storage_get(&es_sk_state, sk, NULL, 0);
	if (!st)
		return 0;
	if (server_close(oldstate, newstate))
		measure_close(st);
	if (st->counted &&
	    (oldstate == TCP_CLOSE_WAIT || newstate != TCP_CLOSE_WAIT)) {
		st->counted = 0;
		live_add(&es_conns, &es_conns_cls, st->port, st->class_id, -1);
		/* No request enters service once the mark is off. */
		request_drop(st);
	}
	return 0;
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
SEC("iter/tcp")
int edgeshed_seed(struct bpf_iter__tcp *ctx)
{
	struct sock *sk = iter_full_sock(ctx);

	if (!sk)
		return 0;
	if (sk->__sk_common.skc_state == TCP_ESTABLISHED ||
	    sk->__sk_common.skc_state == TCP_CLOSE_WAIT) {
		count_socket(sk, 0);
		request_arrived(sk, 1);
	}
	return 0;
}

/* Idle connections of the ports that reclaim them (reclaim_idle.bpf.h):
 * the daemon lists them, then aborts those it chose. */
SEC("iter/tcp")
int edgeshed_idle(struct bpf_iter__tcp *ctx)
{
	return list_idle(ctx);
}

SEC("iter/tcp")
int edgeshed_reclaim(struct bpf_iter__tcp *ctx)
{
	return reclaim_chosen(ctx);
}

/*
 * Request arrival: data queued on a tracked connection. sock_def_readable()
 * runs this for sockets still in the accept queue too, so a lazy accept()
 * counts in the response time and in service. Every socket of the host
 * passes here: anything but a tracked TCP socket leaves at the first two
 * checks. A connection the server is done with has lost its mark (a client
 * that half-closes after its request keeps it: CLOSE_WAIT). Needs Linux 6.6.
 */
SEC("tp_btf/sk_data_ready")
int BPF_PROG(edgeshed_request, struct sock *sk)
{
	if (sk->sk_protocol != IPPROTO_TCP)
		return 0;
	request_arrived(sk, 0);
	return 0;
}

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
SEC("tp_btf/tcp_sendmsg_locked")
int BPF_PROG(edgeshed_response, struct sock *sk)
{
	struct edgeshed_sk_state *st;
	__u64 start, now;

	st = bpf_sk_storage_get(&es_sk_state, sk, NULL, 0);
	if (!st || !st->request_ns)
		return 0;
	now = bpf_ktime_get_ns();
	if (tcp_unread(sk)) {
		start = __sync_lock_test_and_set(&st->request_ns, now);
		if (start && !st->untimed)
			latency_record(st, EDGESHED_LATENCY_RESPONSE,
				       now - start);
		st->untimed = 1;
		return 0;
	}
	start = __sync_lock_test_and_set(&st->request_ns, 0);
	if (!start)
		return 0;
	if (!st->untimed)
		latency_record(st, EDGESHED_LATENCY_RESPONSE, now - start);
	live_add(&es_inflight, &es_inflight_cls, st->port, st->class_id, -1);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
