// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * edgeshed data plane: admit or shed each new TCP connection (SYN) and QUIC
 * connection (Initial) to a protected port, at XDP or TC ingress; and the
 * programs of the socket tracker (request_tracker.bpf.h), which keeps the
 * live counts of requests in service and of established connections that
 * the caps compare against.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "cgroup_timers.bpf.h"
#include "decide.bpf.h"
#include "latency.bpf.h"
#include "maps.bpf.h"
#include "parse.bpf.h"
#include "reclaim_idle.bpf.h"
#include "request_tracker.bpf.h"
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

/* The socket tracker's programs (request_tracker.bpf.h). */
SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(edgeshed_track, struct sock *sk, int oldstate, int newstate)
{
	track_state_change(sk, oldstate, newstate);
	if (oldstate == TCP_SYN_RECV && newstate == TCP_ESTABLISHED)
		cgroup_handshake_request(sk);
	return 0;
}

SEC("iter/tcp")
int edgeshed_seed(struct bpf_iter__tcp *ctx)
{
	struct sock *sk = iter_full_sock(ctx);

	if (sk)
		seed_socket(sk);
	return 0;
}

SEC("tp_btf/sk_data_ready")
int BPF_PROG(edgeshed_request, struct sock *sk)
{
	if (sk->sk_protocol == IPPROTO_TCP)
		request_arrived(sk, 0, EDGESHED_TIMERS_TRACEPOINTS);
	return 0;
}

SEC("tp_btf/tcp_sendmsg_locked")
int BPF_PROG(edgeshed_response, struct sock *sk)
{
	request_answered(sk, EDGESHED_TIMERS_TRACEPOINTS);
	return 0;
}

/* The same timers on a cgroup's sockets only (cgroup_timers.bpf.h), for
 * the ports timed there. Both always allow the segment. */
SEC("cgroup_skb/ingress")
int edgeshed_request_cg(struct __sk_buff *skb)
{
	cgroup_request_bytes(skb);
	return 1;
}

SEC("cgroup_skb/egress")
int edgeshed_response_cg(struct __sk_buff *skb)
{
	cgroup_answer_sent(skb);
	return 1;
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

char LICENSE[] SEC("license") = "Dual BSD/GPL";
