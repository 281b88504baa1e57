/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A new request on a connection already open, to a port that refuses them,
 * while its class's requests in service are at the cap: both ends are reset
 * before the server reads it (TC ingress only: XDP can reach neither the
 * socket's storage nor a second packet).
 *
 * "New" is what the request counter says (latency.bpf.h): the connection
 * has no request in service, so this segment starts one, and it is the next
 * byte the server expects. A segment of a request already in service, a
 * second request beside one outstanding (pipelined, HTTP/2), a
 * retransmission, or a connection the tracker does not know all pass: a
 * request the server has read, or may be reading, is never cut.
 *
 * A request the server never read was never applied, so the client may
 * retry it (RFC 9110 9.2.2), on a new connection that meets the SYN's
 * decision.
 */
#ifndef EDGESHED_REFUSE_REQUEST_BPF_H
#define EDGESHED_REFUSE_REQUEST_BPF_H

#include "decide.bpf.h"
#include "rst.bpf.h"

#define BPF_F_CURRENT_NETNS_ID (-1)
#define IPV4_IHL_UNIT 4
#define TCP_DOFF_UNIT 4

/* The data segment of an established connection, as the request check needs
 * it; offsets from skb->data (the link-layer header, if any). */
struct data_segment {
	struct bpf_sock_tuple tuple; /* as the client sent it */
	__u32 l3_off;
	__u32 seq;	   /* host order */
	__u32 ack_seq;	   /* host order */
	__u32 payload_len;
	__u16 dport;	   /* host order */
	__u8 family;
};

/*
 * Reads an untagged IPv4 or IPv6 (no extension header) TCP segment that
 * carries data and an ACK, and no SYN, RST or FIN. Anything else returns -1
 * and passes: a refusal is never owed, so the unusual frame keeps to the
 * safe side.
 */
static __always_inline int read_data_segment(struct __sk_buff *skb,
					     struct data_segment *seg)
{
	__u32 off = l2_header_len(), l4_off, tot;
	struct tcphdr th;
	__u8 flags;

	if (skb->protocol == bpf_htons(ETH_P_IP)) {
		struct iphdr ip;

		if (bpf_skb_load_bytes(skb, off, &ip, sizeof(ip)))
			return -1;
		if (ip.ihl < IPV4_MIN_IHL || ip.protocol != IPPROTO_TCP ||
		    (bpf_ntohs(ip.frag_off) & (IPV4_MF | IPV4_OFFSET_MASK)))
			return -1;
		l4_off = off + ip.ihl * IPV4_IHL_UNIT;
		tot = bpf_ntohs(ip.tot_len);
		if (tot < ip.ihl * IPV4_IHL_UNIT)
			return -1;
		seg->payload_len = tot - ip.ihl * IPV4_IHL_UNIT;
		seg->tuple.ipv4.saddr = ip.saddr;
		seg->tuple.ipv4.daddr = ip.daddr;
		seg->family = AF_INET;
	} else if (skb->protocol == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr ip6;

		if (bpf_skb_load_bytes(skb, off, &ip6, sizeof(ip6)))
			return -1;
		if (ip6.nexthdr != IPPROTO_TCP)
			return -1;
		l4_off = off + sizeof(ip6);
		seg->payload_len = bpf_ntohs(ip6.payload_len);
		__builtin_memcpy(seg->tuple.ipv6.saddr, &ip6.saddr,
				 sizeof(seg->tuple.ipv6.saddr));
		__builtin_memcpy(seg->tuple.ipv6.daddr, &ip6.daddr,
				 sizeof(seg->tuple.ipv6.daddr));
		seg->family = AF_INET6;
	} else {
		return -1;
	}
	if (bpf_skb_load_bytes(skb, l4_off, &th, sizeof(th)))
		return -1;
	flags = tcp_flag_byte(&th);
	if ((flags & (TCP_FLAG_SYN | TCP_FLAG_RST | TCP_FLAG_FIN |
		      TCP_FLAG_ACK)) != TCP_FLAG_ACK ||
	    th.doff < TCP_MIN_DOFF ||
	    seg->payload_len <= th.doff * TCP_DOFF_UNIT)
		return -1;
	seg->payload_len -= th.doff * TCP_DOFF_UNIT;
	seg->l3_off = off;
	seg->seq = bpf_ntohl(th.seq);
	seg->ack_seq = bpf_ntohl(th.ack_seq);
	seg->dport = bpf_ntohs(th.dest);
	if (seg->family == AF_INET) {
		seg->tuple.ipv4.sport = th.source;
		seg->tuple.ipv4.dport = th.dest;
	} else {
		seg->tuple.ipv6.sport = th.source;
		seg->tuple.ipv6.dport = th.dest;
	}
	return 0;
}

/*
 * The class of the connection when this segment starts a new request on it
 * and is the next byte its server expects; -1 otherwise. The socket's
 * storage is the tracker's: set at the passive open, marked with the
 * request in service by the request timer. A response still unsent, or
 * not acknowledged by this segment (a pipelined request arriving while the
 * last answer is on its way), is never cut, nor is a connection that ever
 * had bytes arrive with a request in service (overlapped, abi.h): a second
 * request may be in service unseen. Nor is a connection's first
 * request: the SYN decision admitted it, and clients retry a refused request
 * only on a reused connection (Go's transport, curl).
 */
static __always_inline int new_request_group(struct __sk_buff *skb,
					     struct data_segment *seg,
					     __u64 netns)
{
	struct edgeshed_sk_state *st;
	struct bpf_sock *sk, *full;
	struct tcp_sock *tp;
	int group = -1;

	/* Constant sizes: the verifier bounds the tuple by them. */
	if (seg->family == AF_INET)
		sk = bpf_skc_lookup_tcp(skb, &seg->tuple,
					sizeof(seg->tuple.ipv4), netns, 0);
	else
		sk = bpf_skc_lookup_tcp(skb, &seg->tuple,
					sizeof(seg->tuple.ipv6), netns, 0);
	if (!sk)
		return -1;
	full = bpf_sk_fullsock(sk);
	if (!full || full->state != BPF_TCP_ESTABLISHED)
		goto out;
	tp = bpf_skc_to_tcp_sock(sk);
	/* The segment itself acknowledges the server's last answer: its ACK,
	 * not yet processed, is what says the answer is all through. */
	if (!tp || !tp->bytes_received || tp->rcv_nxt != seg->seq ||
	    tp->copied_seq != tp->rcv_nxt || tp->write_seq != seg->ack_seq)
		goto out;
	st = bpf_sk_storage_get(&es_sk_state, full, NULL, 0);
	if (!st || !st->counted || st->request_ns || st->overlapped ||
	    st->port != seg->dport)
		goto out;
	group = st->group;
out:
	bpf_sk_release(sk);
	return group;
}

/* The frame from l3_off on becomes a bare RST of the connection, to the
 * client or to the server; the Ethernet header's MACs, if any, are swapped each time
 * (back again for the server's). Returns the new frame length, or -1. */
static __always_inline int write_request_rst(struct __sk_buff *skb,
					     const struct data_segment *seg,
					     int to_client)
{
	struct edgeshed_pkt pkt = {};
	__u32 len;

	/* pkt is the segment the RST answers (rst.bpf.h): the RST goes from
	 * its destination to its source. The client's RST carries the
	 * segment's ACK as its sequence number (RFC 9293 3.10.7.1), the
	 * server's the segment's own: each the next its receiver expects. */
	pkt.family = seg->family;
	pkt.l3_off = seg->l3_off;
	if (seg->family == AF_INET) {
		pkt.saddr[0] = to_client ? seg->tuple.ipv4.saddr :
					   seg->tuple.ipv4.daddr;
		pkt.daddr[0] = to_client ? seg->tuple.ipv4.daddr :
					   seg->tuple.ipv4.saddr;
		pkt.sport = bpf_ntohs(to_client ? seg->tuple.ipv4.sport :
						  seg->tuple.ipv4.dport);
		pkt.dport = bpf_ntohs(to_client ? seg->tuple.ipv4.dport :
						  seg->tuple.ipv4.sport);
		len = seg->l3_off + sizeof(struct rst_v4);
	} else {
		__builtin_memcpy(pkt.saddr,
				 to_client ? seg->tuple.ipv6.saddr :
					     seg->tuple.ipv6.daddr,
				 sizeof(pkt.saddr));
		__builtin_memcpy(pkt.daddr,
				 to_client ? seg->tuple.ipv6.daddr :
					     seg->tuple.ipv6.saddr,
				 sizeof(pkt.daddr));
		pkt.sport = bpf_ntohs(to_client ? seg->tuple.ipv6.sport :
						  seg->tuple.ipv6.dport);
		pkt.dport = bpf_ntohs(to_client ? seg->tuple.ipv6.dport :
						  seg->tuple.ipv6.sport);
		len = seg->l3_off + sizeof(struct rst_v6);
	}
	if (bpf_skb_change_tail(skb, len, 0))
		return -1;
	return edgeshed_write_bare_rst((void *)(long)skb->data,
				       (void *)(long)skb->data_end, &pkt,
				       to_client ? seg->ack_seq : seg->seq);
}

/*
 * Where the port's sockets are looked up: the interface's namespace, or its
 * service's (a container's) by the id the interface's namespace gives it.
 * -1 while that namespace is gone or has no id: nothing is refused there.
 */
static __always_inline int port_lookup_netns(const struct edgeshed_port *p,
					     __u64 *netns)
{
	if (!p->netns_ino) {
		*netns = (__u64)BPF_F_CURRENT_NETNS_ID;
		return 0;
	}
	if (p->netns_ino == EDGESHED_NETNS_NONE || p->netns_id < 0)
		return -1;
	*netns = (__u64)p->netns_id;
	return 0;
}

/*
 * Resets both ends: a copy of the frame goes back out of the device towards
 * the client, and the frame itself goes on up to the server's socket. The
 * checksums written are whole ones: the stack checks them again in
 * software. Returns 0 once both are on their way.
 */
static __always_inline int reset_both_ends(struct __sk_buff *skb,
					   const struct data_segment *seg)
{
	if (write_request_rst(skb, seg, 1) < 0)
		return -1;
	bpf_csum_level(skb, BPF_CSUM_LEVEL_RESET);
	if (bpf_clone_redirect(skb, skb->ifindex, 0))
		return -1;
	if (write_request_rst(skb, seg, 0) < 0)
		return -1;
	return 0;
}

/* The service's classes at their in-flight cap or with their queue gate
 * shut, a bit each (*gated: those of the gate alone): the socket lookup,
 * the filter's dearest step, is paid only while one is (a lookup per class
 * instead). */
static __always_inline __u32 classes_at_cap(const struct edgeshed_policy_set *set,
					    __u32 service, __u64 now,
					    __u32 *gated)
{
	__u32 c, g, mask = 0;

#pragma unroll
	for (c = 0; c < EDGESHED_NUM_CLASSES; c++) {
		g = edgeshed_group(service, c);
		if (g >= EDGESHED_NUM_GROUPS)
			break;
		if (at_cap(&es_inflight_cls, g, set->cls[g].inflight_cap)) {
			mask |= 1u << c;
		} else if (queue_gate_shut(g, &set->cls[g], now)) {
			mask |= 1u << c;
			*gated |= 1u << c;
		}
	}
	return mask;
}

/* A sampled event of a refusal (events.bpf.h), from the client's side. */
static __always_inline void emit_request_event(const struct edgeshed_config *cfg,
					       const struct data_segment *seg,
					       __u32 group, int outcome,
					       __u64 now)
{
	struct edgeshed_pkt pkt = {};

	pkt.family = seg->family;
	pkt.dport = seg->dport;
	if (seg->family == AF_INET) {
		pkt.saddr[0] = seg->tuple.ipv4.saddr;
		pkt.sport = bpf_ntohs(seg->tuple.ipv4.sport);
	} else {
		__builtin_memcpy(pkt.saddr, seg->tuple.ipv6.saddr,
				 sizeof(pkt.saddr));
		pkt.sport = bpf_ntohs(seg->tuple.ipv6.sport);
	}
	emit_event(cfg, &pkt, EDGESHED_PROTO_TCP, group, EDGESHED_REASON_CAP,
		   outcome, now);
}

/*
 * TC verdict for a frame that may carry a new request on an open
 * connection. Cheap for all but protected ports that refuse requests.
 */
static __always_inline int edgeshed_request_verdict(struct __sk_buff *skb)
{
	struct data_segment seg = {};
	struct edgeshed_policy_set *set;
	struct edgeshed_port *port;
	struct admission a = { .proto = EDGESHED_PROTO_TCP };
	__u32 key, at_cap_mask, gated = 0;
	__u64 netns;
	int group, class_id;

	if (read_data_segment(skb, &seg))
		return TC_ACT_UNSPEC;
	key = seg.dport;
	port = bpf_map_lookup_elem(&es_ports, &key);
	if (!port || !(port->protocols & EDGESHED_PORT_TCP) ||
	    port->requests != EDGESHED_REQUESTS_REFUSE ||
	    port->service >= EDGESHED_MAX_SERVICES ||
	    port_lookup_netns(port, &netns))
		return TC_ACT_UNSPEC;
	if (admission_settings(&a) || a.cfg->mode == EDGESHED_MODE_OFF)
		return TC_ACT_UNSPEC;
	a.now = coarse_now();
	if (heartbeat_stale(a.cfg, a.ctl, a.now))
		return TC_ACT_UNSPEC;
	set = active_policy(a.ctl);
	if (!set)
		return TC_ACT_UNSPEC;
	at_cap_mask = classes_at_cap(set, port->service, a.now, &gated);
	if (!at_cap_mask)
		return TC_ACT_UNSPEC;
	group = new_request_group(skb, &seg, netns);
	if (group < 0 || group >= EDGESHED_NUM_GROUPS ||
	    edgeshed_group_service(group) != port->service)
		return TC_ACT_UNSPEC;
	class_id = (int)edgeshed_group_class(group);
	if (!(at_cap_mask & (1u << class_id)))
		return TC_ACT_UNSPEC;
	if (gated & (1u << class_id))
		a.s->global[EDGESHED_GCTR_QUEUE_GATE]++;
	if (a.cfg->mode != EDGESHED_MODE_ENFORCE) {
		class_count(a.s, a.proto, class_id,
			    EDGESHED_CTR_WOULD_REFUSE_REQUEST);
		emit_request_event(a.cfg, &seg, group,
				   EDGESHED_EVENT_WOULD_REFUSE_REQUEST, a.now);
		return TC_ACT_UNSPEC;
	}
	/* Before the frame is rewritten: the event names the client. */
	emit_request_event(a.cfg, &seg, group, EDGESHED_EVENT_REQUEST_REFUSED,
			   a.now);
	if (reset_both_ends(skb, &seg)) {
		/* The frame may be half rewritten: the server must not read
		 * it as data, and the client retransmits into the next tick. */
		a.s->global[EDGESHED_GCTR_REQUEST_RST_FAILED]++;
		return TC_ACT_SHOT;
	}
	class_count(a.s, a.proto, class_id, EDGESHED_CTR_REQUEST_REFUSED);
	group_shed(group);
	return TC_ACT_UNSPEC;
}

#endif /* EDGESHED_REFUSE_REQUEST_BPF_H */
