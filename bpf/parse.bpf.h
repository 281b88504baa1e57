/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Ethernet / VLAN / IPv4 / IPv6 parsing into struct edgeshed_pkt (or IP
 * first, on an IP device); the transport in parse_l4.bpf.h, the types in
 * parse_types.bpf.h. */
#ifndef EDGESHED_PARSE_BPF_H
#define EDGESHED_PARSE_BPF_H

#include "framing.bpf.h"
#include "parse_l4.bpf.h"
#include "parse_types.bpf.h"

/* One's complement sum over the header: all ones when it is intact. The
 * sum does not depend on byte order, so the words are added as read. */
static __always_inline int ipv4_checksum_ok(const struct iphdr *iph,
					    __u32 ihl_bytes, void *data_end)
{
	const __u32 *word = (const __u32 *)iph;
	__u64 sum = 0;
	int i;

#pragma unroll
	for (i = 0; i < IPV4_MAX_HDR_WORDS; i++) {
		if (i * sizeof(*word) >= ihl_bytes)
			break;
		if ((void *)(word + i + 1) > data_end)
			return 0;
		sum += word[i];
	}
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return sum == 0xffff;
}

/*
 * frame_len: the whole frame's length, which at TC may reach past the
 * linear data_end; lengths are checked against it, headers against data_end.
 */
static __always_inline int parse_ipv4(void *data, void *data_end,
				      __u32 frame_len, __u32 off,
				      struct edgeshed_pkt *pkt)
{
	struct iphdr *iph = data + off;
	__u32 ihl_bytes, tot_len;
	__u16 frag;
	int ret;

	if ((void *)(iph + 1) > data_end)
		return EDGESHED_PARSE_UNPARSED;
	if (iph->version != IPVERSION || iph->ihl < IPV4_MIN_IHL)
		return EDGESHED_PARSE_UNPARSED;
	ihl_bytes = iph->ihl * 4;
	tot_len = bpf_ntohs(iph->tot_len);
	/* Trailing bytes (Ethernet padding) are fine; missing ones are not. */
	if (tot_len < ihl_bytes || off + tot_len > frame_len)
		return EDGESHED_PARSE_UNPARSED;
	/* A later fragment carries no ports. A first one carries the TCP
	 * header, and Linux makes a connection of the reassembled SYN. */
	frag = bpf_ntohs(iph->frag_off);
	if (frag & IPV4_OFFSET_MASK)
		return EDGESHED_PARSE_FRAGMENT;
	pkt->first_fragment = !!(frag & IPV4_MF);
	ret = parse_transport(data, data_end, iph->protocol, off + ihl_bytes,
			      tot_len - ihl_bytes, pkt);
	if (!may_be_new_connection(ret))
		return ret;
	pkt->family = AF_INET;
	pkt->saddr[0] = iph->saddr;
	pkt->daddr[0] = iph->daddr;
	if (new_connection(ret))
		pkt->l3_off = off;
	return ret;
}

static __always_inline int parse_ipv6(void *data, void *data_end,
				      __u32 frame_len, __u32 off,
				      struct edgeshed_pkt *pkt)
{
	struct ipv6hdr *ip6h = data + off;
	__u32 payload_len, ext_off;
	__u8 nexthdr;
	int i, ret;

	if ((void *)(ip6h + 1) > data_end)
		return EDGESHED_PARSE_UNPARSED;
	if (ip6h->version != IPV6_VERSION)
		return EDGESHED_PARSE_UNPARSED;
	payload_len = bpf_ntohs(ip6h->payload_len);
	/* Linux takes a zero payload length before a Hop-by-Hop header for a
	 * jumbogram's, Jumbo option or not, and the packet's own length for it
	 * (ip6_rcv_core skips the trim): so must we, or such a SYN gets
	 * through unseen. */
	if (payload_len == 0 && ip6h->nexthdr == NEXTHDR_HOP &&
	    frame_len >= off + sizeof(*ip6h))
		payload_len = frame_len - off - sizeof(*ip6h);
	if (off + sizeof(*ip6h) + payload_len > frame_len)
		return EDGESHED_PARSE_UNPARSED;
	nexthdr = ip6h->nexthdr;
	ext_off = 0; /* bytes of extension headers walked so far */
	pkt->first_fragment = 0;
#pragma unroll
	for (i = 0; i < EDGESHED_MAX_IPV6_EXT; i++) {
		struct ipv6_opt_hdr *opt;
		struct frag_hdr *frag;
		__u16 frag_off;

		switch (nexthdr) {
		case IPPROTO_TCP:
			goto transport;
		case IPPROTO_UDP:
			goto udp;
		case NEXTHDR_HOP:
		case NEXTHDR_ROUTING:
		case NEXTHDR_DEST:
			opt = (void *)(ip6h + 1) + ext_off;
			if ((void *)(opt + 1) > data_end)
				return EDGESHED_PARSE_UNPARSED;
			nexthdr = opt->nexthdr;
			ext_off += (opt->hdrlen + 1) * 8;
			break;
		case NEXTHDR_FRAGMENT:
			frag = (void *)(ip6h + 1) + ext_off;
			if ((void *)(frag + 1) > data_end ||
			    ext_off + sizeof(*frag) > payload_len)
				return EDGESHED_PARSE_UNPARSED;
			/* An atomic fragment (RFC 6946) is a whole packet; a
			 * first fragment is walked on, as for IPv4. */
			frag_off = bpf_ntohs(frag->frag_off);
			if (frag_off & IPV6_FRAG_OFFSET_MASK)
				return EDGESHED_PARSE_FRAGMENT;
			pkt->first_fragment = !!(frag_off & IPV6_FRAG_MF);
			nexthdr = frag->nexthdr;
			ext_off += sizeof(*frag);
			break;
		default:
			return not_ours(pkt);
		}
		if (ext_off > payload_len)
			return EDGESHED_PARSE_UNPARSED;
	}
	switch (nexthdr) {
	case IPPROTO_TCP:
		break;
	case IPPROTO_UDP:
		goto udp;
	case NEXTHDR_HOP:
	case NEXTHDR_ROUTING:
	case NEXTHDR_DEST:
	case NEXTHDR_FRAGMENT:
		ret = EDGESHED_PARSE_TOO_DEEP; /* chain longer than we walk */
		goto addresses;
	default:
		return not_ours(pkt);
	}
transport:
	ret = parse_datagram_tcp(data, data_end, off + sizeof(*ip6h) + ext_off,
				 payload_len - ext_off, pkt);
	if (!may_be_new_connection(ret))
		return ret;
	goto addresses;
udp:
	/* Its own label: one shared with TCP's would let the compiler test
	 * both protocols at once, and the verifier walk TCP's paths for it. */
	ret = udp_found(off + sizeof(*ip6h) + ext_off, payload_len - ext_off,
			pkt);
addresses:
	pkt->family = AF_INET6;
	__builtin_memcpy(pkt->saddr, &ip6h->saddr, sizeof(pkt->saddr));
	__builtin_memcpy(pkt->daddr, &ip6h->daddr, sizeof(pkt->daddr));
	if (new_connection(ret))
		pkt->l3_off = off;
	return ret;
}

/* A packet of an IP device: its first nibble, the version, is its family. */
static __always_inline int parse_ip_packet(void *data, void *data_end,
					   __u32 frame_len,
					   struct edgeshed_pkt *pkt)
{
	__u8 *first = data;

	if ((void *)(first + 1) > data_end)
		return EDGESHED_PARSE_UNPARSED;
	switch (*first >> IP_VERSION_SHIFT) {
	case IPVERSION:
		return parse_ipv4(data, data_end, frame_len, 0, pkt);
	case IPV6_VERSION:
		return parse_ipv6(data, data_end, frame_len, 0, pkt);
	default:
		return EDGESHED_PARSE_OTHER;
	}
}

static __always_inline int edgeshed_parse(void *data, void *data_end,
					  __u32 frame_len,
					  struct edgeshed_pkt *pkt)
{
	struct ethhdr *eth = data;
	__u32 off = sizeof(*eth);
	__u16 proto;
	int i, ret;

	if (framing_is_ip())
		return parse_ip_packet(data, data_end, frame_len, pkt);
	if ((void *)(eth + 1) > data_end)
		return EDGESHED_PARSE_UNPARSED;
	proto = bpf_ntohs(eth->h_proto);
#pragma unroll
	for (i = 0; i < EDGESHED_MAX_VLANS; i++) {
		struct vlan_hdr *vh;

		if (proto != ETH_P_8021Q && proto != ETH_P_8021AD)
			break;
		vh = data + off;
		if ((void *)(vh + 1) > data_end)
			return EDGESHED_PARSE_UNPARSED;
		proto = bpf_ntohs(vh->h_vlan_encapsulated_proto);
		off += sizeof(*vh);
	}
	switch (proto) {
	case ETH_P_IP:
		ret = parse_ipv4(data, data_end, frame_len, off, pkt);
		break;
	case ETH_P_IPV6:
		ret = parse_ipv6(data, data_end, frame_len, off, pkt);
		break;
	case ETH_P_8021Q:
	case ETH_P_8021AD:
		/* The kernel strips any number of tags: whatever is behind
		 * them may be a SYN. */
		pkt->family = 0;
		__builtin_memcpy(pkt->src_mac, eth->h_source,
				 sizeof(pkt->src_mac));
		return EDGESHED_PARSE_TOO_DEEP;
	default:
		return EDGESHED_PARSE_OTHER;
	}
	/* Only a new connection may be answered: established packets skip it. */
	if (ret == EDGESHED_PARSE_SYN) {
		pkt->src_mac_group = eth->h_source[0] & ETH_GROUP_BIT;
		__builtin_memcpy(pkt->dst_mac, eth->h_dest, sizeof(pkt->dst_mac));
	}
	return ret;
}

/*
 * The kernel drops a datagram whose IPv4 header checksum is wrong, so a SYN
 * or Initial in it is no connection to shed or answer. Only one about to be
 * shed pays for the sum: one admitted reaches the kernel's own check anyway.
 */
static __always_inline int ipv4_header_intact(const struct edgeshed_pkt *pkt,
					      void *data, void *data_end)
{
	__u32 off = pkt->l3_off;
	struct iphdr *iph;

	if (pkt->family != AF_INET)
		return 1;
	if (off > MAX_L3_OFF)
		return 0;
	iph = data + off;
	if ((void *)(iph + 1) > data_end)
		return 0;
	return ipv4_checksum_ok(iph, iph->ihl * 4, data_end);
}

#endif /* EDGESHED_PARSE_BPF_H */
