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
 * host's name. An IP device has no other host at layer 2. */
static __always_inline int addressed_to_host(const struct edgeshed_pkt *pkt,
					     const struct edgeshed_config *cfg)
{
	int i;

	if (framing_is_ip())
		return 1;
	if (pkt->at_tc)
		return pkt->tc_to_host;
#pragma unroll
	for (i = 0; i < EDGESHED_MAC_LEN; i++) {
		if (pkt->dst_mac[i] != cfg->if_mac[i])
			return 0;
	}
	return 1;
}

/* The prefix length of a level of the reflection limit: the configured
 * one, then the aggregates coarser than it; -1 past the last. */
static __always_inline int reflect_prefix(const struct edgeshed_rst_reflect *lim,
					  __u8 family, int level)
{
	int base, aggregate;

	if (family == AF_INET6) {
		base = lim->prefix6 ? lim->prefix6 :
				      EDGESHED_DEFAULT_RST_REFLECT_PREFIX6;
		aggregate = level == 1 ? EDGESHED_RST_REFLECT_AGGREGATE6_A :
					 EDGESHED_RST_REFLECT_AGGREGATE6_B;
	} else {
		base = lim->prefix4 ? lim->prefix4 :
				      EDGESHED_DEFAULT_RST_REFLECT_PREFIX4;
		aggregate = level == 1 ? EDGESHED_RST_REFLECT_AGGREGATE4_A :
					 EDGESHED_RST_REFLECT_AGGREGATE4_B;
	}
	if (level == 0)
		return base;
	return aggregate < base ? aggregate : -1;
}

/* The reflection limit's key: a sender's address, cut to prefix. */
static __always_inline void reflect_key(struct edgeshed_rst_reflect_key *key,
					__u8 family, int prefix,
					const __be32 *addr)
{
	int i;

	key->family = family;
	key->prefix = prefix;
	if (family != AF_INET6) {
		key->addr[0] = prefix_word(addr, 0, prefix);
		return;
	}
#pragma unroll
	for (i = 0; i < 4; i++)
		key->addr[i] = prefix_word(addr, i, prefix);
}

/* The first RST toward a network not tracked yet, from the budget all such
 * networks share. */
static __always_inline int reflect_new_network(__u64 interval,
					       __u64 tolerance, __u64 now)
{
	__u32 zero = 0;
	__u64 *next = bpf_map_lookup_elem(&es_rst_reflect_new, &zero);

	return next && gcra_take(next, interval, tolerance, now);
}

/*
 * Takes one RST of the reflection limit of the SYN's sender network and of
 * each aggregate holding it (a GCRA each), so a sustained flood still
 * draws per_sec, toward a network of any size. Refused at one level, the
 * RSTs taken at the levels before are given back.
 */
static __always_inline int reflect_take(const struct edgeshed_config *cfg,
					const struct edgeshed_pkt *pkt,
					__u64 now)
{
	const struct edgeshed_rst_reflect *lim = &cfg->rst_reflect;
	__u64 *taken[EDGESHED_RST_REFLECT_LEVELS] = {};
	__u64 interval, tolerance, due;
	int level, prefix, i;

	if (!lim->per_sec)
		return 1;
	interval = NSEC_PER_SEC / lim->per_sec;
	tolerance = interval * ((lim->burst ? lim->burst : 1) - 1);
#pragma unroll
	for (level = 0; level < EDGESHED_RST_REFLECT_LEVELS; level++) {
		struct edgeshed_rst_reflect_key key = {};
		__u64 *next;

		prefix = reflect_prefix(lim, pkt->family, level);
		if (prefix < 0)
			break;
		reflect_key(&key, pkt->family, prefix, pkt->saddr);
		next = bpf_map_lookup_elem(&es_rst_reflect, &key);
		if (next) {
			if (!gcra_take(next, interval, tolerance, now))
				goto give_back;
			taken[level] = next;
			continue;
		}
		/* Not tracked lately: its whole burst, less this RST (should
		 * another CPU insert it first, this RST is one more). A
		 * network of the configured size costs the shared budget. */
		if (level == 0 && !reflect_new_network(interval, tolerance, now))
			return 0;
		due = now + interval;
		bpf_map_update_elem(&es_rst_reflect, &key, &due, BPF_NOEXIST);
	}
	return 1;
give_back:
#pragma unroll
	for (i = 0; i < EDGESHED_RST_REFLECT_LEVELS; i++) {
		if (taken[i])
			__sync_fetch_and_sub(taken[i], interval);
	}
	return 0;
}

/*
 * A connection established from a network earns it per_conn RSTs of its
 * reflection limit, up to its whole burst, at each level. A spoofed flood
 * cannot complete handshakes from its victim's addresses, so this lifts
 * only the limits of networks with real clients: many of them behind one
 * NAT, shed by a sustained overload, are refused instead of waiting 1 s for
 * a retransmitted SYN. A network not limited lately has no entry and its
 * whole burst.
 */
static __always_inline void reflect_credit(const struct edgeshed_config *cfg,
					   __u8 family, const __be32 *addr,
					   __u64 now)
{
	const struct edgeshed_rst_reflect *lim = &cfg->rst_reflect;
	__u64 credit, due;
	int level, prefix;

	if (!lim->per_sec || !lim->per_conn)
		return;
	credit = (NSEC_PER_SEC / lim->per_sec) * lim->per_conn;
#pragma unroll
	for (level = 0; level < EDGESHED_RST_REFLECT_LEVELS; level++) {
		struct edgeshed_rst_reflect_key key = {};
		__u64 *next;

		prefix = reflect_prefix(lim, family, level);
		if (prefix < 0)
			break;
		reflect_key(&key, family, prefix, addr);
		next = bpf_map_lookup_elem(&es_rst_reflect, &key);
		if (!next)
			continue;
		due = *(volatile __u64 *)next;
		if (due <= now)
			continue;
		/* Paid off: a due time in the past restores the whole burst
		 * (gcra_take()), whichever CPU's clock reads it. A CPU that
		 * moved the word meanwhile wins, and this credit is lost: none
		 * is made up. */
		if (due - now <= credit)
			__sync_val_compare_and_swap(next, due, 0);
		else
			__sync_fetch_and_sub(next, credit);
	}
}

#endif /* EDGESHED_RST_POLICY_BPF_H */
