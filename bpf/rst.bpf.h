/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Rewrites a SYN in place into the RST+ACK that refuses it, or a data
 * segment into a bare RST of its connection (refuse_request.bpf.h). */
#ifndef EDGESHED_RST_BPF_H
#define EDGESHED_RST_BPF_H

#include "parse.bpf.h"

#define RST_TTL 64
#define IPV4_DF 0x4000
#define ETH_ALEN 6
#define TCP_DOFF_BYTE (TCP_MIN_DOFF << 4)
#define TCP_RST_ACK (TCP_FLAG_RST | TCP_FLAG_ACK)

struct rst_v4 {
	struct iphdr ip;
	struct tcphdr tcp;
};

struct rst_v6 {
	struct ipv6hdr ip;
	struct tcphdr tcp;
};

static __always_inline __u32 csum_add16(const void *buf, int bytes, __u32 sum)
{
	const __u16 *w = buf;
	int i;

#pragma unroll
	for (i = 0; i < bytes / 2; i++)
		sum += w[i];
	return sum;
}

static __always_inline __u16 csum_fold(__u32 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

/* The TCP header of a RST from pkt's destination back to its source. No
 * options: the peer has nothing to negotiate with a refusal. */
static __always_inline void fill_rst_tcp(struct tcphdr *th,
					 const struct edgeshed_pkt *pkt,
					 __u32 seq, __u32 ack, __u8 flags)
{
	__u8 *bytes = (__u8 *)th;

	th->source = bpf_htons(pkt->dport);
	th->dest = bpf_htons(pkt->sport);
	th->seq = bpf_htonl(seq);
	th->ack_seq = bpf_htonl(ack);
	bytes[12] = TCP_DOFF_BYTE;
	bytes[13] = flags;
	th->window = 0;
	th->check = 0;
	th->urg_ptr = 0;
}

static __always_inline void build_rst_v4(struct rst_v4 *r,
					 const struct edgeshed_pkt *pkt,
					 __u32 seq, __u32 ack, __u8 flags)
{
	__u32 sum;

	__builtin_memset(r, 0, sizeof(*r));
	r->ip.version = 4;
	r->ip.ihl = IPV4_MIN_IHL;
	r->ip.tot_len = bpf_htons(sizeof(*r));
	r->ip.frag_off = bpf_htons(IPV4_DF);
	r->ip.ttl = RST_TTL;
	r->ip.protocol = IPPROTO_TCP;
	r->ip.saddr = pkt->daddr[0];
	r->ip.daddr = pkt->saddr[0];
	r->ip.check = csum_fold(csum_add16(&r->ip, sizeof(r->ip), 0));

	fill_rst_tcp(&r->tcp, pkt, seq, ack, flags);
	sum = csum_add16(&r->ip.saddr, 2 * sizeof(__be32), 0);
	sum += bpf_htons(IPPROTO_TCP) + bpf_htons(sizeof(r->tcp));
	r->tcp.check = csum_fold(csum_add16(&r->tcp, sizeof(r->tcp), sum));
}

static __always_inline void build_rst_v6(struct rst_v6 *r,
					 const struct edgeshed_pkt *pkt,
					 __u32 seq, __u32 ack, __u8 flags)
{
	__u32 sum;

	__builtin_memset(r, 0, sizeof(*r));
	r->ip.version = 6;
	r->ip.payload_len = bpf_htons(sizeof(r->tcp));
	r->ip.nexthdr = IPPROTO_TCP;
	r->ip.hop_limit = RST_TTL;
	__builtin_memcpy(&r->ip.saddr, pkt->daddr, sizeof(r->ip.saddr));
	__builtin_memcpy(&r->ip.daddr, pkt->saddr, sizeof(r->ip.daddr));

	fill_rst_tcp(&r->tcp, pkt, seq, ack, flags);
	sum = csum_add16(&r->ip.saddr, 2 * sizeof(r->ip.saddr), 0);
	sum += bpf_htons(sizeof(r->tcp)) + bpf_htons(IPPROTO_TCP);
	r->tcp.check = csum_fold(csum_add16(&r->tcp, sizeof(r->tcp), sum));
}

static __always_inline void swap_macs(struct ethhdr *eth)
{
	__u8 tmp[ETH_ALEN];

	__builtin_memcpy(tmp, eth->h_source, ETH_ALEN);
	__builtin_memcpy(eth->h_source, eth->h_dest, ETH_ALEN);
	__builtin_memcpy(eth->h_dest, tmp, ETH_ALEN);
}

/* Turns the link-layer header around, MACs swapped and VLAN tags kept; an
 * IP device has none. 0, or -1 when the header is not in the frame. */
static __always_inline int reverse_l2(void *data, void *data_end)
{
	struct ethhdr *eth = data;

	if (framing_is_ip())
		return 0;
	if ((void *)(eth + 1) > data_end)
		return -1;
	swap_macs(eth);
	return 0;
}

/*
 * Writes a RST from pkt's destination to its source over the frame's
 * headers from pkt->l3_off, keeping the link-layer header (reverse_l2()).
 * Returns the new frame length, which is never longer than the frame, or
 * -1. The caller trims the frame to that length.
 */
static __always_inline int write_rst(void *data, void *data_end,
				     const struct edgeshed_pkt *pkt, __u32 seq,
				     __u32 ack, __u8 flags)
{
	__u32 off = pkt->l3_off;

	if (off > MAX_L3_OFF || reverse_l2(data, data_end))
		return -1;
	if (pkt->family == AF_INET) {
		struct rst_v4 r, *dst = data + off;

		if ((void *)(dst + 1) > data_end)
			return -1;
		build_rst_v4(&r, pkt, seq, ack, flags);
		__builtin_memcpy(dst, &r, sizeof(r));
		return off + sizeof(r);
	}
	if (pkt->family == AF_INET6) {
		struct rst_v6 r, *dst = data + off;

		if ((void *)(dst + 1) > data_end)
			return -1;
		build_rst_v6(&r, pkt, seq, ack, flags);
		__builtin_memcpy(dst, &r, sizeof(r));
		return off + sizeof(r);
	}
	return -1;
}

/*
 * The RST that refuses a SYN. RFC 9293 3.10.7.1: a RST answering a segment
 * without ACK has sequence number zero and acknowledges everything the
 * segment occupied (SYN and data; a SYN+FIN never gets here).
 */
static __always_inline int edgeshed_write_rst(void *data, void *data_end,
					      const struct edgeshed_pkt *pkt)
{
	return write_rst(data, data_end, pkt, 0, pkt->seq + 1 + pkt->payload_len,
			 TCP_RST_ACK);
}

/* A bare RST of an established connection with sequence number seq: the
 * next its receiver expects, which it accepts at once (RFC 5961 3.2). */
static __always_inline int edgeshed_write_bare_rst(void *data, void *data_end,
						   const struct edgeshed_pkt *pkt,
						   __u32 seq)
{
	return write_rst(data, data_end, pkt, seq, 0, TCP_FLAG_RST);
}

#endif /* EDGESHED_RST_BPF_H */
