/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Whether a shed SYN may be answered by a RST: addresses, the host, and
 * the reflection limit of the sender's network. */
#ifndef EDGESHED_RST_POLICY_BPF_H
#define EDGESHED_RST_POLICY_BPF_H

#include "classify.bpf.h"
#include "counters.bpf.h"
#include "maps.bpf.h"
#include "parse.bpf.h"
#include "shed_rules.bpf.h"

/* IPv4 0.0.0.0/8 (this network), 224.0.0.0/4 (multicast) and everything
 * above (reserved, broadcast), first octet. */
#define IPV4_THIS_NET_OCTET 0
#define IPV4_FIRST_MULTICAST_OCTET 224
#define IPV6_MULTICAST_OCTET 0xff

static __always_inline int ipv4_unicast(__be32 addr)
{
	__u8 first = bpf_ntohl(addr) >> 24;

	return first != IPV4_THIS_NET_OCTET && first < IPV4_FIRST_MULTICAST_OCTET;
}

static __always_inline int ipv6_unicast(const __be32 *addr)
{
	if (!(addr[0] | addr[1] | addr[2] | addr[3]))
		return 0; /* :: */
	return (bpf_ntohl(addr[0]) >> 24) != IPV6_MULTICAST_OCTET;
}

/*
 * A RST goes from the SYN's destination to its sender. Both must be unicast:
 * a group or unspecified sender is spoofed (a RST to it would flood a group),
 * and a group destination would become a RST's forged source.
 */
static __always_inline int rst_may_answer(const struct edgeshed_pkt *pkt)
{
	if (pkt->src_mac_group)
		return 0;
	if (pkt->family == AF_INET)
		return ipv4_unicast(pkt->saddr[0]) && ipv4_unicast(pkt->daddr[0]);
	return ipv6_unicast(pkt->saddr) && ipv6_unicast(pkt->daddr);
}

/* A RST goes back only for a frame sent to this host: one for another MAC
 * (promiscuous mode, a bridge, a flooding switch) would answer in another
 * host's name. */
static __always_inline int addressed_to_host(const struct edgeshed_pkt *pkt,
					     const struct edgeshed_config *cfg)
{
	int i;

	if (pkt->at_tc)
		return pkt->tc_to_host;
#pragma unroll
	for (i = 0; i < EDGESHED_MAC_LEN; i++) {
		if (pkt->dst_mac[i] != cfg->if_mac[i])
			return 0;
	}
	return 1;
}

/* The reflection limit's key: a sender's address, cut to its prefix. */
static __always_inline void
reflect_key(struct edgeshed_rst_reflect_key *key,
	    const struct edgeshed_rst_reflect *lim, __u8 family,
	    const __be32 *addr)
{
	int prefix, i;

	key->family = family;
	if (family != AF_INET6) {
		prefix = lim->prefix4 ? lim->prefix4 :
					EDGESHED_DEFAULT_RST_REFLECT_PREFIX4;
		key->addr[0] = prefix_word(addr, 0, prefix);
		return;
	}
	prefix = lim->prefix6 ? lim->prefix6 : EDGESHED_DEFAULT_RST_REFLECT_PREFIX6;
#pragma unroll
	for (i = 0; i < 4; i++)
		key->addr[i] = prefix_word(addr, i, prefix);
}

/*
 * Takes one RST of the reflection limit of the SYN's sender network (a
 * GCRA per network), so a sustained flood still draws per_sec.
 */
static __always_inline int reflect_take(const struct edgeshed_config *cfg,
					const struct edgeshed_pkt *pkt,
					__u64 now)
{
	const struct edgeshed_rst_reflect *lim = &cfg->rst_reflect;
	struct edgeshed_rst_reflect_key key = {};
	__u64 interval, due;
	__u64 *next;

	if (!lim->per_sec)
		return 1;
	interval = NSEC_PER_SEC / lim->per_sec;
	reflect_key(&key, lim, pkt->family, pkt->saddr);
	next = bpf_map_lookup_elem(&es_rst_reflect, &key);
	if (!next) {
		/* A network not seen lately: its whole burst, less this RST.
		 * Should another CPU insert it first, this RST is one more. */
		due = now + interval;
		bpf_map_update_elem(&es_rst_reflect, &key, &due, BPF_NOEXIST);
		return 1;
	}
	return gcra_take(next, interval,
			 interval * ((lim->burst ? lim->burst : 1) - 1), now);
}

/*
 * A connection established from a network earns it per_conn RSTs of its
 * reflection limit, up to its whole burst. A spoofed flood cannot complete
 * handshakes from its victim's addresses, so this lifts only the limit of
 * networks with real clients: many of them behind one NAT, shed by a
 * sustained overload, are refused instead of waiting 1 s for a retransmitted
 * SYN. A network not limited lately has no entry and its whole burst.
 */
static __always_inline void reflect_credit(const struct edgeshed_config *cfg,
					   __u8 family, const __be32 *addr,
					   __u64 now)
{
	const struct edgeshed_rst_reflect *lim = &cfg->rst_reflect;
	struct edgeshed_rst_reflect_key key = {};
	__u64 credit, due;
	__u64 *next;

	if (!lim->per_sec || !lim->per_conn)
		return;
	reflect_key(&key, lim, family, addr);
	next = bpf_map_lookup_elem(&es_rst_reflect, &key);
	if (!next)
		return;
	credit = (NSEC_PER_SEC / lim->per_sec) * lim->per_conn;
	due = *(volatile __u64 *)next;
	if (due <= now)
		return;
	/* Paid off: a due time in the past restores the whole burst
	 * (gcra_take()), whichever CPU's clock reads it. A CPU that moved the
	 * word meanwhile wins, and this credit is lost: none is made up. */
	if (due - now <= credit)
		__sync_val_compare_and_swap(next, due, 0);
	else
		__sync_fetch_and_sub(next, credit);
}

#endif /* EDGESHED_RST_POLICY_BPF_H */
