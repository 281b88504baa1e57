/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Per-CPU counters, the coarse clock and per-CPU budgets. */
#ifndef EDGESHED_COUNTERS_BPF_H
#define EDGESHED_COUNTERS_BPF_H

#include "maps.bpf.h"

#define NSEC_PER_SEC 1000000000ull

static __always_inline struct edgeshed_stats *stats_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&es_stats, &zero);
}

static __always_inline void global_count(int counter)
{
	struct edgeshed_stats *s = stats_get();

	if (s && counter >= 0 && counter < EDGESHED_NUM_GLOBAL_COUNTERS)
		s->global[counter]++;
}

/* A shed of the group, for its service's law (abi.h, es_group_sheds). */
static __always_inline void group_shed(__u32 group)
{
	__u64 *n = bpf_map_lookup_elem(&es_group_sheds, &group);

	if (n)
		(*n)++;
}

static __always_inline void class_count(struct edgeshed_stats *s, __u32 proto,
					__u32 class_id, int counter)
{
	/* A class derived from a group (edgeshed_group_class()) is bounded by
	 * its arithmetic, which the compiler sees and the verifier does not:
	 * the check must stay. */
	barrier_var(class_id);
	if (class_id >= EDGESHED_NUM_CLASSES || counter < 0 ||
	    counter >= EDGESHED_NUM_COUNTERS)
		return;
	if (proto == EDGESHED_PROTO_QUIC)
		s->quic_cls[class_id][counter]++;
	else
		s->cls[class_id][counter]++;
}

/*
 * The coarse clock (one jiffy's resolution), read as a helper call once a
 * jiffy per CPU: the coarse time only moves on the tick that moves jiffies,
 * and the verifier inlines bpf_jiffies64() into a load. Every consumer
 * (heartbeat, rate limits, budgets) works on milliseconds or more.
 */
static __always_inline __u64 coarse_now(void)
{
	struct edgeshed_clock *c;
	__u32 zero = 0;
	__u64 jiffies;

	c = bpf_map_lookup_elem(&es_clock, &zero);
	if (!c)
		return bpf_ktime_get_coarse_ns();
	jiffies = bpf_jiffies64();
	if (c->jiffies != jiffies) {
		c->ns = bpf_ktime_get_coarse_ns();
		c->jiffies = jiffies;
	}
	return c->ns;
}

/* Takes one unit of a per-CPU budget of limit per second. */
static __always_inline int budget_take(void *budget_map, __u32 limit, __u64 now)
{
	struct edgeshed_budget *b;
	__u32 zero = 0;

	b = bpf_map_lookup_elem(budget_map, &zero);
	if (!b)
		return 0;
	if (now - b->window_start_ns >= NSEC_PER_SEC) {
		b->window_start_ns = now;
		b->spent = 0;
	}
	if (b->spent >= limit)
		return 0;
	b->spent++;
	return 1;
}

#endif /* EDGESHED_COUNTERS_BPF_H */
