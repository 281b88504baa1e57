/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The transport of an IP datagram: a TCP SYN, or a QUIC Initial over UDP. */
#ifndef EDGESHED_PARSE_L4_BPF_H
#define EDGESHED_PARSE_L4_BPF_H

#include "parse_types.bpf.h"

/* The TCP flag byte: byte 13 of the header, CWR..FIN. */
static __always_inline __u8 tcp_flag_byte(const struct tcphdr *th)
{
	return ((const __u8 *)th)[13];
}

/*
 * A transport header cut short in a first fragment: its ports, when the cut
 * leaves them, so that the frame is decided as its port's would be.
 */
static __always_inline int cut_short_ports(void *data_end, const void *l4,
					   __u32 l4_len, __u8 proto,
					   struct edgeshed_pkt *pkt, int cut_short)
{
	const __be16 *ports = l4;

	if (cut_short != EDGESHED_PARSE_TOO_DEEP || l4_len < L4_PORTS_LEN ||
	    (void *)l4 + L4_PORTS_LEN > data_end)
		return cut_short;
	pkt->sport = bpf_ntohs(ports[0]);
	pkt->dport = bpf_ntohs(ports[1]);
	pkt->cut_proto = proto;
	return cut_short;
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
		return cut_short_ports(data_end, th, l4_len, IPPROTO_TCP, pkt,
				       cut_short);
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
		return cut_short_ports(data_end, th, l4_len, IPPROTO_TCP, pkt,
				       cut_short);
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
		return cut_short_ports(data_end, uh, l4_len, IPPROTO_UDP, pkt,
				       cut_short);
	if ((void *)(uh + 1) > data_end)
		return EDGESHED_PARSE_UNPARSED;
	datagram_len = bpf_ntohs(uh->len);
	/* Over IPv6, Linux reads a zero length as the packet's own (a
	 * jumbogram's, RFC 2675; udpv6_rcv), jumbogram or not: so must we,
	 * or such an Initial gets through unseen. In a first fragment the
	 * whole datagram's length is not known yet. */
	if (datagram_len == 0 && pkt->family == AF_INET6) {
		if (pkt->first_fragment)
			return cut_short_ports(data_end, uh, l4_len,
					       IPPROTO_UDP, pkt, cut_short);
		datagram_len = l4_len;
	}
	if (datagram_len < sizeof(*uh))
		return EDGESHED_PARSE_UNPARSED;
	if (!pkt->first_fragment && datagram_len > l4_len)
		return EDGESHED_PARSE_UNPARSED;
	datagram_len -= sizeof(*uh);
	in_frame = pkt->first_fragment ? l4_len - sizeof(*uh) : datagram_len;
	if (datagram_len < QUIC_LONG_FIXED_LEN)
		return not_ours(pkt); /* no long header fits */
	if (in_frame < QUIC_LONG_FIXED_LEN)
		return cut_short_ports(data_end, uh, l4_len, IPPROTO_UDP, pkt,
				       cut_short);
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
		return cut_short_ports(data_end, uh, l4_len, IPPROTO_UDP, pkt,
				       cut_short);
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

/* The furthest UDP header parse_udp() reads: past it, too deep. It bounds
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

#endif /* EDGESHED_PARSE_L4_BPF_H */
