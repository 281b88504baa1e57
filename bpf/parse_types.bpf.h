/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* What the parser reads frames into: struct edgeshed_pkt, its results, and
 * the protocol constants. */
#ifndef EDGESHED_PARSE_TYPES_BPF_H
#define EDGESHED_PARSE_TYPES_BPF_H

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
#define IP_VERSION_SHIFT 4 /* the version is an IP header's first nibble */
#define IPVERSION 4
#define IPV6_VERSION 6
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

/* A transport header's first bytes: the source and destination ports. */
#define L4_PORTS_LEN 4

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
	/* Too deep: IPPROTO_TCP or IPPROTO_UDP when the cut header still gave
	 * the ports (sport, dport), else 0. */
	__u8 cut_proto;
	/* Too deep before an IP header: the sender's MAC, the one field of
	 * its own that the frame showed. */
	__u8 src_mac[EDGESHED_MAC_LEN];
	__be32 saddr[4]; /* IPv4 uses [0] */
	__be32 daddr[4];
};

#endif /* EDGESHED_PARSE_TYPES_BPF_H */
