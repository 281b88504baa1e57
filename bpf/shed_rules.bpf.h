/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* A class's shed rules: the fraction, the token rate (GCRA) and the
 * in-flight caps. */
#ifndef EDGESHED_SHED_RULES_BPF_H
#define EDGESHED_SHED_RULES_BPF_H

#include "classify.bpf.h"
#include "counters.bpf.h"
#include "maps.bpf.h"
#include "parse.bpf.h"
#include "queue_age.bpf.h"

#define FRAC_MASK (EDGESHED_FRAC_ONE - 1)

static __always_inline int shed_by_fraction(const struct edgeshed_config *cfg,
					    const struct edgeshed_control *ctl,
					    const struct edgeshed_pkt *pkt,
					    __u32 shed_frac)
{
	__u32 draw;

	if (!shed_frac)
		return 0;
	if (cfg->draw == EDGESHED_DRAW_RANDOM)
		draw = bpf_get_prandom_u32();
	else if (pkt->family)
		draw = source_hash(cfg, pkt->family, pkt->saddr, ctl->salt);
	else
		draw = mac_hash(pkt->src_mac, ctl->salt);
	return (draw & FRAC_MASK) < shed_frac;
}

/*
 * GCRA, the lock-free form of a token bucket: *next is the time the next
 * unit is due, and one is granted while that time is at most tolerance
 * (burst - 1 intervals) ahead of now. Refusal under a flood only reads the
 * word, so the CPUs of a flood share its cache line instead of bouncing it;
 * a grant moves it by one atomic operation (an add, undone if another CPU
 * took the last unit first). No CPU waits on another, a sustained flood
 * draws exactly the rate, and a clock read before another CPU's update
 * grants nothing extra: a due time ahead of now is spent, whoever set it.
 */
static __always_inline int gcra_take(__u64 *next, __u64 interval,
				     __u64 tolerance, __u64 now)
{
	__u64 due, prev;

	due = *(volatile __u64 *)next;
	if (due > now + tolerance)
		return 0;
	/* A due time in the past would grant every interval since as a
	 * burst: an idle limit starts again from now, with its whole burst. */
	if (due < now &&
	    __sync_val_compare_and_swap(next, due, now + interval) == due)
		return 1;
	prev = __sync_fetch_and_add(next, interval);
	if (prev <= now + tolerance)
		return 1;
	__sync_fetch_and_sub(next, interval);
	return 0;
}

/* A token of the group's rate limit. */
static __always_inline int take_token(__u32 group,
				      const struct edgeshed_rate *rate,
				      __u64 now)
{
	__u64 *next = bpf_map_lookup_elem(&es_buckets, &group);

	if (!next)
		return 1;
	return gcra_take(next, rate->interval_ns, rate->tolerance_ns, now);
}

/* A live count of the group (es_inflight_cls, es_conns_cls) is at cap. */
static __always_inline int at_cap(void *group_counts, __u32 group, __u32 cap)
{
	__u64 *count;

	if (!cap)
		return 0;
	count = bpf_map_lookup_elem(group_counts, &group);
	return count && *count >= cap;
}

/* The group has as many requests in service, or established connections,
 * as its caps allow. */
static __always_inline int at_inflight_cap(__u32 group,
					   const struct edgeshed_class_policy *pol)
{
	return at_cap(&es_inflight_cls, group, pol->inflight_cap) ||
	       at_cap(&es_conns_cls, group, pol->conn_cap);
}

/* The group's queue gate is shut (queue_age.bpf.h), counted apart: a shed
 * at the cap that the cap alone would not have made. */
static __always_inline int at_queue_gate(__u32 group,
					 const struct edgeshed_class_policy *pol,
					 __u64 now)
{
	if (!queue_gate_shut(group, pol, now))
		return 0;
	global_count(EDGESHED_GCTR_QUEUE_GATE);
	return 1;
}

/* The policy set the controller published last. */
static __always_inline struct edgeshed_policy_set *
active_policy(const struct edgeshed_control *ctl)
{
	__u32 slot = ctl->active_slot & (EDGESHED_POLICY_SLOTS - 1);

	return bpf_map_lookup_elem(&es_policy, &slot);
}

/* with_cap: the in-flight cap applies (TCP; the kernel counts no live QUIC
 * connection). */
static __always_inline int shed_reason(__u32 group,
				       const struct edgeshed_config *cfg,
				       const struct edgeshed_control *ctl,
				       const struct edgeshed_class_policy *pol,
				       const struct edgeshed_rate *rate,
				       const struct edgeshed_pkt *pkt, __u64 now,
				       int with_cap)
{
	if (with_cap && (at_inflight_cap(group, pol) ||
			 at_queue_gate(group, pol, now)))
		return EDGESHED_REASON_CAP;
	if (shed_by_fraction(cfg, ctl, pkt, pol->shed_frac))
		return EDGESHED_REASON_FRAC;
	if (pol->tokens_per_sec && !take_token(group, rate, now))
		return EDGESHED_REASON_RATE;
	return EDGESHED_REASON_NONE;
}

#endif /* EDGESHED_SHED_RULES_BPF_H */
