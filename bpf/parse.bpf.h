/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Ethernet / VLAN / IPv4 / IPv6 / TCP and QUIC-over-UDP parsing into struct
 * edgeshed_pkt. */
#ifndef EDGESHED_PARSE_BPF_H
#define EDGESHED_PARSE_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include <edgeshed/abi.h>

/* I/G bit of a MAC's first octet: set for multicast and broadcast. */
#define ETH_GROUP_BIT 0x01
#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD
#define ETH_P_8021Q 0x8100
#define ETH_P_8021AD 0x88A8
#define PACKET_HOST 0 /* skb->pkt_type of a frame to this host's MAC */
#define AF_INET 2
#define AF_INET6 10

/* IPv6 next-header values of the extension headers we walk. */
#define NEXTHDR_HOP 0
#define NEXTHDR_ROUTING 43
#define NEXTHDR_FRAGMENT 44
#define NEXTHDR_DEST 60

/* Deeper frames are abandoned (EDGESHED_PARSE_TOO_DEEP): QinQ plus two
 * 802.1p priority tags, and twice the extension headers a real client sends. */
#define EDGESHED_MAX_VLANS 4
#define EDGESHED_MAX_IPV6_EXT 6
#define IPV4_MIN_IHL 5
#define IPV4_MF 0x2000
#define IPV4_OFFSET_MASK 0x1fff
#define IPV6_FRAG_OFFSET_MASK 0xfff8
#define IPV6_FRAG_MF 0x0001
#define IPV4_MAX_HDR_WORDS 15 /* a 60-byte header in 32-bit words */
#define TCP_MIN_DOFF 5
/* Ethernet plus the VLAN tags the parser walks. */
#define MAX_L3_OFF (sizeof(struct ethhdr) + EDGESHED_MAX_VLANS * sizeof(struct vlan_hdr))

/* QUIC's invariant long header (RFC 8999) and the Initial types of the
 * versions we know: v1 (RFC 9000) and v2 (RFC 9369), whose types differ. */
#define QUIC_LONG_HEADER 0x80
#define QUIC_LONG_TYPE_SHIFT 4
#define QUIC_LONG_TYPE_MASK 0x3
#define QUIC_VERSION_1 0x00000001
#define QUIC_VERSION_2 0x6b3343cf
#define QUIC_V1_TYPE_INITIAL 0
#define QUIC_V2_TYPE_INITIAL 1
#define QUIC_MAX_CID_LEN 20
/* First byte, version and DCID length. */
#define QUIC_LONG_FIXED_LEN 6

#define TCP_FLAG_FIN 0x01
#define TCP_FLAG_SYN 0x02
#define TCP_FLAG_RST 0x04
#define TCP_FLAG_ACK 0x10

/* New connections first, then what is decided on too: the callers test
 * ranges (one comparison each), which the verifier follows exactly. */
enum edgeshed_parse_result {
	EDGESHED_PARSE_SYN = 0,	 /* a new connection: pkt fully filled in */
	/* A UDP datagram, maybe a QUIC Initial (a new connection): family,
	 * addresses, l4_off and in_frame_len (the IP payload in this frame)
	 * filled in; parse_udp() reads on. */
	EDGESHED_PARSE_UDP,
	/* Headers deeper than we walk, so a SYN may hide behind them; family
	 * and saddr are filled in when the IP header was reached, else 0. */
	EDGESHED_PARSE_TOO_DEEP,
	EDGESHED_PARSE_OTHER,	 /* anything else that is not malformed */
	EDGESHED_PARSE_FRAGMENT, /* IP fragment without a new connection we see */
	EDGESHED_PARSE_UNPARSED, /* truncated or malformed */
	/* parse_udp(): the datagram is a QUIC Initial; ports and payload_len
	 * (the datagram's) filled in. */
	EDGESHED_PARSE_QUIC_INITIAL,
};

struct edgeshed_pkt {
	__u32 l3_off;
	__u32 l4_off;
	__u32 payload_len; /* TCP payload bytes; UDP: the whole datagram's */
	__u32 in_frame_len; /* UDP: bytes of the datagram in this frame */
	__u32 seq;	   /* host order */
	__u16 sport;	   /* host order */
	__u16 dport;	   /* host order */
	__u8 family;	   /* AF_INET or AF_INET6 */
	__u8 tcp_flags;
	__u8 src_mac_group; /* the sender's MAC is a group address */
	__u8 first_fragment; /* in an IP datagram's first fragment */
	__u8 dst_mac[EDGESHED_MAC_LEN];
	__u8 at_tc;	     /* TC decides by tc_to_host, XDP by dst_mac */
	__u8 tc_to_host;     /* skb->pkt_type is PACKET_HOST */
	__be32 saddr[4]; /* IPv4 uses [0] */
	__be32 daddr[4];
};

/* The TCP flag byte: byte 13 of the header, CWR..FIN. */
static __always_inline __u8 tcp_flag_byte(const struct tcphdr *th)
{
	return ((const __u8 *)th)[13];
}

/*
 * cut_short: the result for a TCP header that ends past l4_len. In a first
 * fragment the rest of it, flags included, may come in the next one, so the
 * caller passes EDGESHED_PARSE_TOO_DEEP there.
 */
static __always_inline int parse_tcp(void *data, void *data_end, __u32 off,
				     __u32 l4_len, int cut_short,
				     struct edgeshed_pkt *pkt)
{
	struct tcphdr *th = data + off;
	__u32 doff_bytes;

	/* Keeps clang from recomputing th after the check, which the verifier
	 * would see as an unchecked pointer. */
	barrier_var(th);
	/* Bytes past the IP length are link-layer padding, not a header. */
	if (l4_len < sizeof(*th))
		return cut_short;
	if ((void *)(th + 1) > data_end)
		return EDGESHED_PARSE_UNPARSED;
	/* Established flows leave here, having paid for nothing else. A RST
	 * is no connection attempt: a listener ignores it (RFC 9293 3.10.7.2)
	 * and it must never be answered with a RST. Nor is a SYN+FIN: Linux's
	 * listener discards it, so it costs neither a token nor a RST. */
	if ((tcp_flag_byte(th) &
	     (TCP_FLAG_SYN | TCP_FLAG_ACK | TCP_FLAG_RST | TCP_FLAG_FIN)) !=
	    TCP_FLAG_SYN)
		return EDGESHED_PARSE_OTHER;
	if (th->doff < TCP_MIN_DOFF)
		return EDGESHED_PARSE_UNPARSED;
	doff_bytes = th->doff * 4;
	if (doff_bytes > l4_len)
		return cut_short;
	pkt->l4_off = off;
	pkt->payload_len = l4_len - doff_bytes;
	pkt->sport = bpf_ntohs(th->source);
	pkt->dport = bpf_ntohs(th->dest);
	pkt->seq = bpf_ntohl(th->seq);
	pkt->tcp_flags = tcp_flag_byte(th);
	return EDGESHED_PARSE_SYN;
}

/*
 * The TCP segment of an IP datagram. In a first fragment, one that is no SYN
 * is a fragment like any other, and a header cut short may go on in the next
 * fragment: too deep, not malformed.
 */
static __always_inline int parse_datagram_tcp(void *data, void *data_end,
					      __u32 off, __u32 l4_len,
					      struct edgeshed_pkt *pkt)
{
	int ret;

	ret = parse_tcp(data, data_end, off, l4_len,
			pkt->first_fragment ? EDGESHED_PARSE_TOO_DEEP :
					      EDGESHED_PARSE_UNPARSED,
			pkt);
	if (ret == EDGESHED_PARSE_OTHER && pkt->first_fragment)
		return EDGESHED_PARSE_FRAGMENT;
	return ret;
}

/* Neither TCP nor a QUIC Initial: in a first fragment, counted as a
 * fragment. */
static __always_inline int not_ours(const struct edgeshed_pkt *pkt)
{
	return pkt->first_fragment ? EDGESHED_PARSE_FRAGMENT :
				     EDGESHED_PARSE_OTHER;
}

/* The QUIC version's Initial type, or -1 for a version we do not know. */
static __always_inline int quic_initial_type(__be32 version)
{
	switch (bpf_ntohl(version)) {
	case QUIC_VERSION_1:
		return QUIC_V1_TYPE_INITIAL;
	case QUIC_VERSION_2:
		return QUIC_V2_TYPE_INITIAL;
	default:
		return -1;
	}
}

/*
 * A UDP datagram, read on in a function of its own for the verifier (see
 * edgeshed.bpf.c): is it a new QUIC connection? That is an Initial of a
 * version we know (RFC 8999's long header, then RFC 9000's and 9369's type
 * bits), with connection IDs of at most 20 bytes. Only the invariant header
 * is read; nothing is decrypted. Short headers, which every packet of an
 * open QUIC connection has, leave at the first byte; other versions pass,
 * as a server answers them with Version Negotiation, no connection. In a
 * first fragment, the UDP length is the whole datagram's, and a header that
 * goes on in the next fragment is too deep to see. off is bound by the
 * caller.
 */
static __always_inline int parse_udp(void *data, void *data_end, __u32 off,
				     __u32 l4_len, struct edgeshed_pkt *pkt)
{
	int cut_short = pkt->first_fragment ? EDGESHED_PARSE_TOO_DEEP :
					      EDGESHED_PARSE_UNPARSED;
	struct udphdr *uh = data + off;
	__u32 datagram_len, in_frame, need, dcid_len;
	__u8 *q, *scid_len;
	int initial_type;

	barrier_var(uh);
	if (l4_len < sizeof(*uh))
		return cut_short;
	if ((void *)(uh + 1) > data_end)
		return EDGESHED_PARSE_UNPARSED;
	datagram_len = bpf_ntohs(uh->len);
	if (datagram_len < sizeof(*uh))
		return EDGESHED_PARSE_UNPARSED;
	if (!pkt->first_fragment && datagram_len > l4_len)
		return EDGESHED_PARSE_UNPARSED;
	datagram_len -= sizeof(*uh);
	in_frame = pkt->first_fragment ? l4_len - sizeof(*uh) : datagram_len;
	if (datagram_len < QUIC_LONG_FIXED_LEN)
		return not_ours(pkt); /* no long header fits */
	if (in_frame < QUIC_LONG_FIXED_LEN)
		return cut_short;
	q = (__u8 *)(uh + 1);
	if ((void *)(q + QUIC_LONG_FIXED_LEN) > data_end)
		return EDGESHED_PARSE_UNPARSED;
	if (!(q[0] & QUIC_LONG_HEADER))
		return not_ours(pkt);
	initial_type = quic_initial_type(*(__be32 *)(q + 1));
	if (initial_type < 0 ||
	    ((q[0] >> QUIC_LONG_TYPE_SHIFT) & QUIC_LONG_TYPE_MASK) != initial_type)
		return not_ours(pkt);
	dcid_len = q[5];
	if (dcid_len > QUIC_MAX_CID_LEN)
		return EDGESHED_PARSE_UNPARSED;
	need = QUIC_LONG_FIXED_LEN + dcid_len + 1; /* the SCID's length too */
	if (need > datagram_len)
		return EDGESHED_PARSE_UNPARSED;
	if (need > in_frame)
		return cut_short;
	scid_len = q + QUIC_LONG_FIXED_LEN + dcid_len;
	if ((void *)(scid_len + 1) > data_end)
		return EDGESHED_PARSE_UNPARSED;
	if (*scid_len > QUIC_MAX_CID_LEN || need + *scid_len > datagram_len)
		return EDGESHED_PARSE_UNPARSED;
	pkt->payload_len = datagram_len;
	pkt->sport = bpf_ntohs(uh->source);
	pkt->dport = bpf_ntohs(uh->dest);
	return EDGESHED_PARSE_QUIC_INITIAL;
}

/* The furthest UDP header parse_udp() reads: past it, unparsed. It bounds
 * the offset for the verifier; no real header chain comes close. */
#define EDGESHED_MAX_UDP_OFF 4096
/* The long header up to the SCID's length, at most. */
#define QUIC_LONG_HEADER_MAX (QUIC_LONG_FIXED_LEN + QUIC_MAX_CID_LEN + 1)

/* A UDP datagram, read on by parse_udp(). */
static __always_inline int udp_found(__u32 off, __u32 l4_len,
				     struct edgeshed_pkt *pkt)
{
	pkt->l4_off = off;
	pkt->in_frame_len = l4_len;
	return EDGESHED_PARSE_UDP;
}

/* The transport of an IP datagram: a TCP SYN or a QUIC Initial, else
 * anything that is none of ours. */
static __always_inline int parse_transport(void *data, void *data_end,
					   __u8 protocol, __u32 off,
					   __u32 l4_len,
					   struct edgeshed_pkt *pkt)
{
	if (protocol == IPPROTO_TCP)
		return parse_datagram_tcp(data, data_end, off, l4_len, pkt);
	if (protocol == IPPROTO_UDP)
		return udp_found(off, l4_len, pkt);
	return not_ours(pkt);
}

/* A new connection, or a datagram that may be one: its addresses are
 * wanted. */
static __always_inline int new_connection(int parsed)
{
	return parsed <= EDGESHED_PARSE_UDP;
}

/* A new connection, or headers too deep that may hide one: its source is
 * wanted. */
static __always_inline int may_be_new_connection(int parsed)
{
	return parsed <= EDGESHED_PARSE_TOO_DEEP;
}

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
	if (iph->version != 4 || iph->ihl < IPV4_MIN_IHL)
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
	if (!new_connection(ret))
		return ret;
	pkt->l3_off = off;
	if (ret == EDGESHED_PARSE_SYN) /* only a RST's source needs it */
		pkt->daddr[0] = iph->daddr;
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
	if (ip6h->version != 6)
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
	if (new_connection(ret))
		pkt->l3_off = off;
	if (ret == EDGESHED_PARSE_SYN)
		__builtin_memcpy(pkt->daddr, &ip6h->daddr, sizeof(pkt->daddr));
	return ret;
}

static __always_inline int edgeshed_parse(void *data, void *data_end,
					  __u32 frame_len,
					  struct edgeshed_pkt *pkt)
{
	struct ethhdr *eth = data;
	__u32 off = sizeof(*eth);
	__u16 proto;
	int i, ret;

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
