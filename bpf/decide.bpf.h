/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Classification and the admit-or-shed decision for a new connection. */
#ifndef EDGESHED_DECIDE_BPF_H
#define EDGESHED_DECIDE_BPF_H

#include "maps.bpf.h"
#include "parse.bpf.h"

#define NSEC_PER_SEC 1000000000ull
/* The smallest UDP payload that may carry a QUIC Initial (RFC 9000 14.1). */
#define QUIC_MIN_INITIAL_DATAGRAM 1200
#define FRAC_MASK (EDGESHED_FRAC_ONE - 1)

enum edgeshed_verdict {
	EDGESHED_VERDICT_PASS = 0,
	EDGESHED_VERDICT_DROP,
	EDGESHED_VERDICT_RST,
};

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

static __always_inline void class_count(struct edgeshed_stats *s, __u32 proto,
					__u32 class_id, int counter)
{
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
	else
		draw = source_hash(cfg, pkt->family, pkt->saddr, ctl->salt);
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

/* A token of the class's rate limit. */
static __always_inline int take_token(__u32 class_id,
				      const struct edgeshed_rate *rate,
				      __u64 now)
{
	__u64 *next = bpf_map_lookup_elem(&es_buckets, &class_id);

	if (!next)
		return 1;
	return gcra_take(next, rate->interval_ns, rate->tolerance_ns, now);
}

/* A live count of the class (es_inflight_cls, es_conns_cls) is at cap. */
static __always_inline int at_cap(void *class_counts, __u32 class_id, __u32 cap)
{
	__u64 *count;

	if (!cap)
		return 0;
	count = bpf_map_lookup_elem(class_counts, &class_id);
	return count && *count >= cap;
}

/* The class has as many requests in service, or established connections,
 * as its caps allow. */
static __always_inline int at_inflight_cap(__u32 class_id,
					   const struct edgeshed_class_policy *pol)
{
	return at_cap(&es_inflight_cls, class_id, pol->inflight_cap) ||
	       at_cap(&es_conns_cls, class_id, pol->conn_cap);
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
static __always_inline int shed_reason(__u32 class_id,
				       const struct edgeshed_config *cfg,
				       const struct edgeshed_control *ctl,
				       const struct edgeshed_class_policy *pol,
				       const struct edgeshed_rate *rate,
				       const struct edgeshed_pkt *pkt, __u64 now,
				       int with_cap)
{
	if (with_cap && at_inflight_cap(class_id, pol))
		return EDGESHED_REASON_CAP;
	if (shed_by_fraction(cfg, ctl, pkt, pol->shed_frac))
		return EDGESHED_REASON_FRAC;
	if (pol->tokens_per_sec && !take_token(class_id, rate, now))
		return EDGESHED_REASON_RATE;
	return EDGESHED_REASON_NONE;
}

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

/* Samples a shed decision (or one observe mode would take) into the event
 * ring. Only new connections that are shed get here, and the sample rate
 * and per-CPU budget bound the cost under a flood. */
static __always_inline void emit_event(const struct edgeshed_config *cfg,
				       const struct edgeshed_pkt *pkt,
				       __u32 proto, __u32 class_id, int reason,
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
	ev->class_id = class_id;
	ev->reason = reason;
	ev->outcome = outcome;
	ev->protocol = proto;
	__builtin_memset(ev->_pad, 0, sizeof(ev->_pad));
	bpf_ringbuf_submit(ev, 0);
}

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

/* The class of the connection and its policy. Returns -1 where the
 * connection passes undecided (counted here): mode off, a controller gone
 * silent (fail open), a missing policy. */
static __always_inline int admission_policy(struct admission *a,
					    const struct edgeshed_pkt *pkt,
					    __u32 port_class)
{
	struct edgeshed_policy_set *set;

	a->class_id = classify_source(a->cfg, pkt->family, pkt->saddr,
				      port_class);
	if (a->class_id >= EDGESHED_NUM_CLASSES) {
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
	a->pol = &set->cls[a->class_id];
	a->rate = &set->rate[a->class_id];
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
		emit_event(a->cfg, pkt, a->proto, a->class_id, reason,
			   EDGESHED_EVENT_WOULD_SHED, a->now);
		return 0;
	}
	class_count(a->s, a->proto, a->class_id,
		    EDGESHED_CTR_SHED_CAP + reason - EDGESHED_REASON_CAP);
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
	if (admission_settings(&a) || admission_policy(&a, pkt, port->class_id))
		return EDGESHED_VERDICT_PASS;
	*class_out = a.class_id;

	reason = shed_reason(a.class_id, a.cfg, a.ctl, a.pol, a.rate, pkt,
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
	emit_event(a.cfg, pkt, a.proto, a.class_id, reason, EDGESHED_EVENT_RST,
		   a.now);
	return EDGESHED_VERDICT_RST;
rst_capped:
	class_count(a.s, a.proto, a.class_id, EDGESHED_CTR_RST_CAPPED);
	emit_event(a.cfg, pkt, a.proto, a.class_id, reason,
		   EDGESHED_EVENT_RST_CAPPED, a.now);
	return EDGESHED_VERDICT_DROP;
drop:
	emit_event(a.cfg, pkt, a.proto, a.class_id, reason, EDGESHED_EVENT_DROP,
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
	if (admission_settings(&a) || admission_policy(&a, pkt, port->class_id))
		return EDGESHED_VERDICT_PASS;
	if (pkt->payload_len < QUIC_MIN_INITIAL_DATAGRAM) {
		a.s->global[EDGESHED_GCTR_QUIC_UNDERSIZED]++;
		return a.cfg->mode == EDGESHED_MODE_ENFORCE ?
			       EDGESHED_VERDICT_DROP :
			       EDGESHED_VERDICT_PASS;
	}

	reason = shed_reason(a.class_id, a.cfg, a.ctl, a.pol, a.rate, pkt,
			     a.now, 0);
	if (!admission_shed(&a, pkt, reason, data, data_end))
		return EDGESHED_VERDICT_PASS;
	if (pkt->first_fragment)
		a.s->global[EDGESHED_GCTR_SHED_FRAGMENT]++;
	emit_event(a.cfg, pkt, a.proto, a.class_id, reason, EDGESHED_EVENT_DROP,
		   a.now);
	return EDGESHED_VERDICT_DROP;
}

/*
 * A frame whose headers go deeper than the parser walks may carry a SYN the
 * kernel would take. While its class sheds (cap reached, or its source drawn
 * by the fraction), it is dropped. Its port is unknown, so its class is its
 * source prefix's, else normal's. It takes no token: it may as well belong
 * to an established flow, and must not starve real SYNs of the rate.
 */
static __always_inline int edgeshed_decide_too_deep(const struct edgeshed_pkt *pkt)
{
	const struct edgeshed_class_policy *pol;
	struct edgeshed_policy_set *set;
	struct admission a = {};
	__u32 class_id;

	if (admission_settings(&a))
		return EDGESHED_VERDICT_PASS;
	if (a.cfg->mode != EDGESHED_MODE_ENFORCE ||
	    heartbeat_stale(a.cfg, a.ctl, coarse_now()))
		goto pass;
	class_id = EDGESHED_CLASS_NORMAL;
	if (pkt->family)
		class_id = classify_source(a.cfg, pkt->family, pkt->saddr,
					   class_id);
	set = active_policy(a.ctl);
	if (!set || class_id >= EDGESHED_NUM_CLASSES)
		goto pass;
	pol = &set->cls[class_id];
	if (at_inflight_cap(class_id, pol) ||
	    shed_by_fraction(a.cfg, a.ctl, pkt, pol->shed_frac)) {
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

	if (l4_off > EDGESHED_MAX_UDP_OFF) {
		global_count(EDGESHED_GCTR_UNPARSED);
		return EDGESHED_VERDICT_PASS;
	}
	ret = parse_udp(data, data_end, l4_off, pkt->in_frame_len, pkt);
	if (ret == EDGESHED_PARSE_QUIC_INITIAL)
		return edgeshed_decide_quic(pkt, data, data_end);
	return undecided_verdict(ret, pkt);
}

#endif /* EDGESHED_DECIDE_BPF_H */
