/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The admit-or-shed decision for a new connection, from the pieces in
 * classify, shed_rules, rst_policy, events and counters. */
#ifndef EDGESHED_DECIDE_BPF_H
#define EDGESHED_DECIDE_BPF_H

#include "classify.bpf.h"
#include "counters.bpf.h"
#include "destination.bpf.h"
#include "events.bpf.h"
#include "maps.bpf.h"
#include "parse.bpf.h"
#include "rst_policy.bpf.h"
#include "service.bpf.h"
#include "shed_rules.bpf.h"

/* The smallest UDP payload that may carry a QUIC Initial (RFC 9000 14.1). */
#define QUIC_MIN_INITIAL_DATAGRAM 1200

enum edgeshed_verdict {
	EDGESHED_VERDICT_PASS = 0,
	EDGESHED_VERDICT_DROP,
	EDGESHED_VERDICT_RST,
};

static __always_inline int heartbeat_stale(const struct edgeshed_config *cfg,
					   const struct edgeshed_control *ctl,
					   __u64 now)
{
	/* Signed: a heartbeat stamped just after this packet's clock read
	 * must not look ages old. */
	return cfg->heartbeat_timeout_ns &&
	       (__s64)(now - ctl->heartbeat_ns) > (__s64)cfg->heartbeat_timeout_ns;
}

/* What a new connection to a protected port is decided by. */
struct admission {
	struct edgeshed_stats *s;
	struct edgeshed_config *cfg;
	struct edgeshed_control *ctl;
	const struct edgeshed_class_policy *pol;
	const struct edgeshed_rate *rate;
	__u64 now;
	__u32 proto; /* enum edgeshed_protocol */
	__u32 group; /* the service's class, edgeshed_group() */
	__u32 class_id;
};

static __always_inline int admission_settings(struct admission *a)
{
	__u32 zero = 0;

	a->s = stats_get();
	a->cfg = bpf_map_lookup_elem(&es_config, &zero);
	a->ctl = bpf_map_lookup_elem(&es_control, &zero);
	if (!a->s || !a->cfg || !a->ctl) {
		global_count(EDGESHED_GCTR_NO_POLICY);
		return -1;
	}
	return 0;
}

/* The settings, for a new connection to this host: -1 where it passes
 * undecided (counted here), missing settings or transit. */
static __always_inline int admission_to_host(struct admission *a,
					     const struct edgeshed_pkt *pkt)
{
	if (admission_settings(a))
		return -1;
	if (!destination_ours(a->cfg, pkt)) {
		a->s->global[EDGESHED_GCTR_TRANSIT]++;
		return -1;
	}
	return 0;
}

/* The service and class of the connection, and their policy. Returns -1
 * where the connection passes undecided (counted here): a port served in
 * several namespaces but not in the destination's, mode off, a controller
 * gone silent (fail open), a missing policy. */
static __always_inline int admission_policy(struct admission *a,
					    const struct edgeshed_pkt *pkt,
					    struct edgeshed_port *port)
{
	struct edgeshed_policy_set *set;
	struct edgeshed_port *svc;

	svc = service_entry(port, pkt->dport,
			    port->service == EDGESHED_SERVICE_BY_NETNS ?
				    destination_netns(pkt) :
				    0);
	if (!svc) {
		a->s->global[EDGESHED_GCTR_UNPROTECTED]++;
		return -1;
	}
	a->class_id = classify_source(a->cfg, pkt->family, pkt->saddr,
				      svc->class_id);
	a->group = service_group(svc, a->class_id);
	if (a->group >= EDGESHED_NUM_GROUPS) {
		a->s->global[EDGESHED_GCTR_NO_POLICY]++;
		return -1;
	}
	if (a->cfg->mode == EDGESHED_MODE_OFF) {
		class_count(a->s, a->proto, a->class_id,
			    EDGESHED_CTR_PASS_MODE_OFF);
		return -1;
	}
	a->now = coarse_now();
	if (heartbeat_stale(a->cfg, a->ctl, a->now)) {
		class_count(a->s, a->proto, a->class_id, EDGESHED_CTR_FAIL_OPEN);
		return -1;
	}
	set = active_policy(a->ctl);
	if (!set) {
		a->s->global[EDGESHED_GCTR_NO_POLICY]++;
		return -1;
	}
	a->pol = &set->cls[a->group];
	a->rate = &set->rate[a->group];
	return 0;
}

/*
 * Counts the decision. Returns 1 where the connection is to be shed, and 0
 * where it passes: admitted, a bad IPv4 header (the kernel drops it), or
 * observe mode.
 */
static __always_inline int admission_shed(const struct admission *a,
					  const struct edgeshed_pkt *pkt,
					  int reason, void *data,
					  void *data_end)
{
	if (reason == EDGESHED_REASON_NONE) {
		class_count(a->s, a->proto, a->class_id, EDGESHED_CTR_ADMITTED);
		return 0;
	}
	if (!ipv4_header_intact(pkt, data, data_end)) {
		a->s->global[EDGESHED_GCTR_BAD_CHECKSUM]++;
		return 0;
	}
	if (a->cfg->mode != EDGESHED_MODE_ENFORCE) {
		class_count(a->s, a->proto, a->class_id,
			    EDGESHED_CTR_WOULD_SHED_CAP + reason -
				    EDGESHED_REASON_CAP);
		emit_event(a->cfg, pkt, a->proto, a->group, reason,
			   EDGESHED_EVENT_WOULD_SHED, a->now);
		return 0;
	}
	class_count(a->s, a->proto, a->class_id,
		    EDGESHED_CTR_SHED_CAP + reason - EDGESHED_REASON_CAP);
	group_shed(a->group);
	return 1;
}

/*
 * Decision for a new connection (SYN without ACK); anything to an
 * unprotected port passes. The returned RST verdict means the caller
 * must turn the packet into a RST (and count RST_SENT once it has).
 */
static __always_inline int edgeshed_decide(const struct edgeshed_pkt *pkt,
					   void *data, void *data_end,
					   __u32 *class_out)
{
	struct admission a = { .proto = EDGESHED_PROTO_TCP };
	struct edgeshed_port *port;
	__u32 key = pkt->dport;
	int reason;

	port = bpf_map_lookup_elem(&es_ports, &key);
	if (!port || !(port->protocols & EDGESHED_PORT_TCP)) {
		global_count(EDGESHED_GCTR_UNPROTECTED);
		return EDGESHED_VERDICT_PASS;
	}
	if (admission_to_host(&a, pkt) || admission_policy(&a, pkt, port))
		return EDGESHED_VERDICT_PASS;
	*class_out = a.class_id;

	reason = shed_reason(a.group, a.cfg, a.ctl, a.pol, a.rate, pkt,
			     a.now, 1);
	if (!admission_shed(&a, pkt, reason, data, data_end))
		return EDGESHED_VERDICT_PASS;
	/* A RST would answer one fragment of a datagram the kernel may still
	 * reassemble; dropped, it never can be. */
	if (pkt->first_fragment) {
		a.s->global[EDGESHED_GCTR_SHED_FRAGMENT]++;
		goto drop;
	}
	if (a.cfg->action != EDGESHED_ACTION_RST)
		goto drop;
	if (!addressed_to_host(pkt, a.cfg)) {
		a.s->global[EDGESHED_GCTR_RST_NOT_TO_HOST]++;
		goto drop;
	}
	if (!rst_may_answer(pkt)) {
		a.s->global[EDGESHED_GCTR_RST_NOT_UNICAST]++;
		goto drop;
	}
	if (!reflect_take(a.cfg, pkt, a.now)) {
		a.s->global[EDGESHED_GCTR_RST_REFLECT_LIMITED]++;
		goto rst_capped;
	}
	if (!budget_take(&es_rst_budget, a.cfg->rst_per_sec_per_cpu, a.now))
		goto rst_capped;
	emit_event(a.cfg, pkt, a.proto, a.group, reason, EDGESHED_EVENT_RST,
		   a.now);
	return EDGESHED_VERDICT_RST;
rst_capped:
	class_count(a.s, a.proto, a.class_id, EDGESHED_CTR_RST_CAPPED);
	emit_event(a.cfg, pkt, a.proto, a.group, reason,
		   EDGESHED_EVENT_RST_CAPPED, a.now);
	return EDGESHED_VERDICT_DROP;
drop:
	emit_event(a.cfg, pkt, a.proto, a.group, reason, EDGESHED_EVENT_DROP,
		   a.now);
	return EDGESHED_VERDICT_DROP;
}

/*
 * Decision for a new QUIC connection (an Initial) to a protected UDP port.
 * The kernel counts no live QUIC connections, so no in-flight cap applies:
 * the fraction and the class's rate do. A shed Initial is dropped, so the
 * client retransmits it as it would a SYN; refusing it outright would need
 * the Initial keys. An Initial in a datagram under 1,200 bytes is one the
 * server must discard anyway (RFC 9000 14.1).
 */
static __always_inline int edgeshed_decide_quic(const struct edgeshed_pkt *pkt,
						void *data, void *data_end)
{
	struct admission a = { .proto = EDGESHED_PROTO_QUIC };
	struct edgeshed_port *port;
	__u32 key = pkt->dport;
	int reason;

	port = bpf_map_lookup_elem(&es_ports, &key);
	if (!port || !(port->protocols & EDGESHED_PORT_QUIC))
		return EDGESHED_VERDICT_PASS;
	/* Mode off and a silent controller pass even an undersized one. */
	if (admission_to_host(&a, pkt) || admission_policy(&a, pkt, port))
		return EDGESHED_VERDICT_PASS;
	if (pkt->payload_len < QUIC_MIN_INITIAL_DATAGRAM) {
		a.s->global[EDGESHED_GCTR_QUIC_UNDERSIZED]++;
		return a.cfg->mode == EDGESHED_MODE_ENFORCE ?
			       EDGESHED_VERDICT_DROP :
			       EDGESHED_VERDICT_PASS;
	}

	reason = shed_reason(a.group, a.cfg, a.ctl, a.pol, a.rate, pkt,
			     a.now, 0);
	if (!admission_shed(&a, pkt, reason, data, data_end))
		return EDGESHED_VERDICT_PASS;
	if (pkt->first_fragment)
		a.s->global[EDGESHED_GCTR_SHED_FRAGMENT]++;
	emit_event(a.cfg, pkt, a.proto, a.group, reason, EDGESHED_EVENT_DROP,
		   a.now);
	return EDGESHED_VERDICT_DROP;
}

/*
 * The group a frame too deep to read would have as a new connection: its
 * port's service and class, when the cut header gave the port (-1 for a port
 * not protected for its transport), else service 0's normal, the class ports
 * have by default; the class then its source prefix's.
 */
static __always_inline int too_deep_group(const struct edgeshed_pkt *pkt,
					  const struct edgeshed_config *cfg)
{
	__u32 class_id = EDGESHED_CLASS_NORMAL, service = 0;

	if (pkt->cut_proto) {
		__u32 want = pkt->cut_proto == IPPROTO_UDP ? EDGESHED_PORT_QUIC :
							      EDGESHED_PORT_TCP;
		__u32 key = pkt->dport;
		struct edgeshed_port *port, *svc;

		port = bpf_map_lookup_elem(&es_ports, &key);
		if (!port || !(port->protocols & want))
			return -1;
		/* A port of several namespaces: its headers were not read
		 * far enough to say whose. */
		svc = service_entry(port, pkt->dport, 0);
		if (!svc)
			return -1;
		class_id = svc->class_id;
		service = svc->service;
	}
	if (pkt->family)
		class_id = classify_source(cfg, pkt->family, pkt->saddr,
					   class_id);
	if (service >= EDGESHED_MAX_SERVICES || class_id >= EDGESHED_NUM_CLASSES)
		return -1;
	return (int)edgeshed_group(service, class_id);
}

/*
 * A frame whose headers go deeper than the parser walks may carry a SYN the
 * kernel would take, so it is decided as that SYN would be: its class's
 * cap, fraction (drawn on what was parsed: the source address, else the
 * source MAC) and rate, whose token it takes. Shed, it is dropped: a RST
 * would answer headers we could not read. Counted apart from SYNs.
 */
static __always_inline int edgeshed_decide_too_deep(const struct edgeshed_pkt *pkt)
{
	struct edgeshed_policy_set *set;
	struct admission a = {};
	int group, reason;

	if (admission_to_host(&a, pkt))
		return EDGESHED_VERDICT_PASS;
	if (a.cfg->mode != EDGESHED_MODE_ENFORCE)
		goto pass;
	a.now = coarse_now();
	if (heartbeat_stale(a.cfg, a.ctl, a.now))
		goto pass;
	group = too_deep_group(pkt, a.cfg);
	set = active_policy(a.ctl);
	if (!set || group < 0 || group >= EDGESHED_NUM_GROUPS)
		goto pass;
	reason = shed_reason(group, a.cfg, a.ctl, &set->cls[group],
			     &set->rate[group], pkt, a.now,
			     pkt->cut_proto != IPPROTO_UDP);
	if (reason != EDGESHED_REASON_NONE) {
		a.s->global[EDGESHED_GCTR_SHED_TOO_DEEP]++;
		return EDGESHED_VERDICT_DROP;
	}
pass:
	a.s->global[EDGESHED_GCTR_TOO_DEEP]++;
	return EDGESHED_VERDICT_PASS;
}

/* The verdict on what the parser found that is no new connection: a frame
 * too deep to read is decided, the rest pass, counted. */
static __always_inline int undecided_verdict(int parsed,
					     const struct edgeshed_pkt *pkt)
{
	switch (parsed) {
	case EDGESHED_PARSE_TOO_DEEP:
		return edgeshed_decide_too_deep(pkt);
	case EDGESHED_PARSE_FRAGMENT:
		global_count(EDGESHED_GCTR_FRAGMENT);
		return EDGESHED_VERDICT_PASS;
	case EDGESHED_PARSE_UNPARSED:
		global_count(EDGESHED_GCTR_UNPARSED);
		return EDGESHED_VERDICT_PASS;
	default:
		return EDGESHED_VERDICT_PASS;
	}
}

/*
 * A UDP datagram, read on and decided when it opens a QUIC connection. Runs
 * in a function of its own, verified once rather than on every path
 * through the parser.
 */
static __always_inline int edgeshed_quic_verdict(void *data, void *data_end,
						 struct edgeshed_pkt *pkt)
{
	__u32 l4_off = pkt->l4_off;
	int ret;

	/* Linux reads it all the same: decided as what it may be, its ports
	 * unread. */
	if (l4_off > EDGESHED_MAX_UDP_OFF)
		return undecided_verdict(EDGESHED_PARSE_TOO_DEEP, pkt);
	ret = parse_udp(data, data_end, l4_off, pkt->in_frame_len, pkt);
	if (ret == EDGESHED_PARSE_QUIC_INITIAL)
		return edgeshed_decide_quic(pkt, data, data_end);
	return undecided_verdict(ret, pkt);
}

#endif /* EDGESHED_DECIDE_BPF_H */
