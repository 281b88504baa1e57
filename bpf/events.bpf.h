/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Sampled shed decisions, into the event ring. */
#ifndef EDGESHED_EVENTS_BPF_H
#define EDGESHED_EVENTS_BPF_H

#include "counters.bpf.h"
#include "maps.bpf.h"
#include "parse.bpf.h"

/* Samples a shed decision (or one observe mode would take) of a connection
 * of `group` (its service's class, abi.h) into the event ring. Only new connections that are shed get here, and the sample rate
 * and per-CPU budget bound the cost under a flood. */
static __always_inline void emit_event(const struct edgeshed_config *cfg,
				       const struct edgeshed_pkt *pkt,
				       __u32 proto, __u32 group, int reason,
				       int outcome, __u64 now)
{
	struct edgeshed_event *ev;

	if (!cfg->events_per_sec_per_cpu)
		return;
	if (cfg->event_sample > 1 &&
	    bpf_get_prandom_u32() % cfg->event_sample)
		return;
	if (!budget_take(&es_event_budget, cfg->events_per_sec_per_cpu, now))
		return;
	ev = bpf_ringbuf_reserve(&es_events, sizeof(*ev), 0);
	if (!ev) {
		global_count(EDGESHED_GCTR_EVENTS_LOST);
		return;
	}
	ev->ktime_ns = now;
	__builtin_memcpy(ev->saddr, pkt->saddr, sizeof(ev->saddr));
	ev->sport = pkt->sport;
	ev->dport = pkt->dport;
	ev->family = pkt->family;
	ev->class_id = edgeshed_group_class(group);
	ev->service = edgeshed_group_service(group);
	ev->reason = reason;
	ev->outcome = outcome;
	ev->protocol = proto;
	__builtin_memset(ev->_pad, 0, sizeof(ev->_pad));
	bpf_ringbuf_submit(ev, 0);
}

#endif /* EDGESHED_EVENTS_BPF_H */
