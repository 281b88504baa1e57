/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Whether a new connection is this host's to decide: its destination. */
#ifndef EDGESHED_DESTINATION_BPF_H
#define EDGESHED_DESTINATION_BPF_H

#include "maps.bpf.h"
#include "parse.bpf.h"

/*
 * A router, or a node that forwards to its pods, sees SYNs for other hosts
 * on the same ports: shedding them would spend this host's tokens on
 * another's clients, and a RST would answer in that host's name. So with
 * EDGESHED_CFG_F_DESTINATIONS only destinations in the tries (the host's
 * local addresses and routes, as the controller reads them from the
 * kernel, and the operator's prefixes) are decided. A frame too deep to
 * reach its IP header is taken for the host's.
 */
static __always_inline struct edgeshed_dst_value *
destination_of(const struct edgeshed_pkt *pkt)
{
	if (pkt->family == AF_INET) {
		struct edgeshed_lpm_v4 key = { .prefixlen = 32 };

		__builtin_memcpy(key.addr, pkt->daddr, sizeof(key.addr));
		return bpf_map_lookup_elem(&es_dst4, &key);
	}
	if (pkt->family == AF_INET6) {
		struct edgeshed_lpm_v6 key = { .prefixlen = 128 };

		__builtin_memcpy(key.addr, pkt->daddr, sizeof(key.addr));
		return bpf_map_lookup_elem(&es_dst6, &key);
	}
	return NULL;
}

static __always_inline int destination_ours(const struct edgeshed_config *cfg,
					    const struct edgeshed_pkt *pkt)
{
	if (!(cfg->flags & EDGESHED_CFG_F_DESTINATIONS))
		return 1;
	if (pkt->family != AF_INET && pkt->family != AF_INET6)
		return 1;
	return destination_of(pkt) != NULL;
}

/* The namespace a new connection is for, as its destination says
 * (edgeshed_dst_value); 0: none known. */
static __always_inline __u64 destination_netns(const struct edgeshed_pkt *pkt)
{
	struct edgeshed_dst_value *v = destination_of(pkt);

	return v ? v->netns_cookie : 0;
}

#endif /* EDGESHED_DESTINATION_BPF_H */
