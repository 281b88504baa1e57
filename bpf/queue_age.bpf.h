/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The age of the requests in service, kept as they enter and leave it: the
 * sums of their entry times (es_inflight_since*) and, while a group has a
 * queue gate, its cohorts (es_cohorts, layout in abi.h). A queue shows in
 * the requests still waiting before any of them is answered, so the gate
 * reads it there and acts at the next SYN, not at the controller's tick.
 */
#ifndef EDGESHED_QUEUE_AGE_BPF_H
#define EDGESHED_QUEUE_AGE_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <edgeshed/abi.h>

#include "maps.bpf.h"

#define NS_PER_US 1000ull

/* The queue gate's age of a group in the policy published last, in ns;
 * 0: no gate. */
static __always_inline __u64 group_queue_age_ns(__u32 group)
{
	struct edgeshed_policy_set *set;
	struct edgeshed_control *ctl;
	__u32 zero = 0, slot;

	if (group >= EDGESHED_NUM_GROUPS)
		return 0;
	ctl = bpf_map_lookup_elem(&es_control, &zero);
	if (!ctl)
		return 0;
	slot = ctl->active_slot & (EDGESHED_POLICY_SLOTS - 1);
	set = bpf_map_lookup_elem(&es_policy, &slot);
	if (!set)
		return 0;
	return set->cls[group].queue_age_us * NS_PER_US;
}

static __always_inline struct edgeshed_cohort *cohort_of(__u32 group,
							 __u64 slice)
{
	__u32 key = group * EDGESHED_COHORT_SLICES +
		    (__u32)(slice & (EDGESHED_COHORT_SLICES - 1));

	return bpf_map_lookup_elem(&es_cohorts, &key);
}

/*
 * A request entered service at `at`. The first request of a slice takes
 * the ring's entry from the slice EDGESHED_COHORT_SLICES before it; two
 * CPUs racing there may lose a count, which costs the gate one request's
 * evidence, never a wrong sign: open is signed and read with arrived.
 */
static __always_inline void cohort_enter(__u32 group, __u64 at)
{
	__u64 age = group_queue_age_ns(group), slice, seen;
	struct edgeshed_cohort *c;

	if (!age)
		return;
	slice = at >> edgeshed_cohort_shift(age);
	c = cohort_of(group, slice);
	if (!c)
		return;
	seen = c->slice;
	if (seen != slice &&
	    __sync_val_compare_and_swap(&c->slice, seen, slice) == seen) {
		c->arrived = 0;
		c->open = 0;
	}
	__sync_fetch_and_add(&c->arrived, 1);
	__sync_fetch_and_add(&c->open, 1);
}

/* A request that entered service at `at` left it. One whose slice the ring
 * no longer holds (older than the ring, or of another gate age) is in no
 * cohort. */
static __always_inline void cohort_leave(__u32 group, __u64 at)
{
	__u64 age = group_queue_age_ns(group), slice;
	struct edgeshed_cohort *c;

	if (!age)
		return;
	slice = at >> edgeshed_cohort_shift(age);
	c = cohort_of(group, slice);
	if (c && c->slice == slice)
		__sync_fetch_and_sub(&c->open, 1);
}

/* Per CPU (abi.h); still atomic, for the softirq that may interrupt a send
 * on this CPU and add to the same entry. */
static __always_inline void since_add(void *map, __u32 key, __u64 d)
{
	__u64 *v = bpf_map_lookup_elem(map, &key);

	if (v)
		__sync_fetch_and_add(v, d);
}

/* The request of a connection of (port, group) entered service at `at`. */
static __always_inline void age_enter(__u16 port, __u32 group, __u64 at)
{
	since_add(&es_inflight_since, port, at);
	since_add(&es_inflight_since_cls, group, at);
	cohort_enter(group, at);
}

/* It left service; `at` is when it entered. */
static __always_inline void age_leave(__u16 port, __u32 group, __u64 at)
{
	since_add(&es_inflight_since, port, -at);
	since_add(&es_inflight_since_cls, group, -at);
	cohort_leave(group, at);
}

/*
 * The gate: shut while more than half of the group's requests that entered
 * service in the two slices just older than its age are still in service,
 * of at least EDGESHED_COHORT_MIN_ARRIVED. While it sheds, later cohorts
 * are too few to say and it opens again: a bound on the queue that the
 * controller's limit then replaces with Little's law.
 */
static __always_inline int queue_gate_shut(__u32 group,
					   const struct edgeshed_class_policy *pol,
					   __u64 now)
{
	__u64 age = pol->queue_age_us * NS_PER_US, slice;
	struct edgeshed_cohort *c;
	__u32 arrived = 0;
	__s32 open = 0;
	int i;

	if (!age || now <= age)
		return 0;
	slice = edgeshed_cohort_due(now, age);
	for (i = 0; i < 2; i++, slice--) {
		c = cohort_of(group, slice);
		if (!c || c->slice != slice)
			continue;
		arrived += c->arrived;
		open += c->open;
	}
	return edgeshed_cohorts_queued(arrived, open);
}

#endif /* EDGESHED_QUEUE_AGE_BPF_H */
