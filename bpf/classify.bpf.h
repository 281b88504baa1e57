/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* A new connection's class, and the hash of its source prefix. */
#ifndef EDGESHED_CLASSIFY_BPF_H
#define EDGESHED_CLASSIFY_BPF_H

#include "maps.bpf.h"
#include "parse.bpf.h"

/* Source-prefix override of the port's class; tries are skipped when empty
 * so the common configuration pays for no LPM walk. */
static __always_inline __u32 classify_source(const struct edgeshed_config *cfg,
					     __u8 family, const __be32 *saddr,
					     __u32 class_id)
{
	struct edgeshed_class_value *v = NULL;

	if (family == AF_INET && cfg->src4_prefixes) {
		struct edgeshed_lpm_v4 key = { .prefixlen = 32 };

		__builtin_memcpy(key.addr, saddr, sizeof(key.addr));
		v = bpf_map_lookup_elem(&es_src4, &key);
	} else if (family == AF_INET6 && cfg->src6_prefixes) {
		struct edgeshed_lpm_v6 key = { .prefixlen = 128 };

		__builtin_memcpy(key.addr, saddr, sizeof(key.addr));
		v = bpf_map_lookup_elem(&es_src6, &key);
	}
	if (v && v->class_id < EDGESHED_NUM_CLASSES)
		return v->class_id;
	return class_id;
}

/* murmur3's finaliser: cheap and mixes every input bit into every output bit. */
static __always_inline __u32 mix32(__u32 h)
{
	h ^= h >> 16;
	h *= 0x85ebca6b;
	h ^= h >> 13;
	h *= 0xc2b2ae35;
	h ^= h >> 16;
	return h;
}

/* The word of an address that holds bits [32 * word, 32 * word + 32) of it,
 * keeping only those within the first prefix bits. */
static __always_inline __be32 prefix_word(const __be32 *addr, int word,
					  int prefix)
{
	int bits = prefix - 32 * word;

	if (bits <= 0)
		return 0;
	if (bits >= 32)
		return addr[word];
	return addr[word] & bpf_htonl(~0u << (32 - bits));
}

static __always_inline __u32 source_hash(const struct edgeshed_config *cfg,
					 __u8 family, const __be32 *saddr,
					 __u32 salt)
{
	int prefix;
	__u32 h;

	if (family != AF_INET6) {
		prefix = cfg->hash_prefix4 ? cfg->hash_prefix4 :
					     EDGESHED_DEFAULT_HASH_PREFIX4;
		return mix32(salt ^ prefix_word(saddr, 0, prefix));
	}
	prefix = cfg->hash_prefix6 ? cfg->hash_prefix6 :
				     EDGESHED_DEFAULT_HASH_PREFIX6;
	h = mix32(salt ^ prefix_word(saddr, 0, prefix));
	h = mix32(h ^ prefix_word(saddr, 1, prefix));
	h = mix32(h ^ prefix_word(saddr, 2, prefix));
	return mix32(h ^ prefix_word(saddr, 3, prefix));
}

/* The hash of a sender known only by its MAC: a frame too deep to reach
 * its IP header. */
static __always_inline __u32 mac_hash(const __u8 *mac, __u32 salt)
{
	__u32 hi = (__u32)mac[0] << 8 | mac[1];
	__u32 lo = (__u32)mac[2] << 24 | (__u32)mac[3] << 16 |
		   (__u32)mac[4] << 8 | mac[5];

	return mix32(mix32(salt ^ hi) ^ lo);
}

#endif /* EDGESHED_CLASSIFY_BPF_H */
