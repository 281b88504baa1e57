/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The ABI between the edgeshed data plane (bpf/) and userspace (controller/).
 *
 * Every struct and constant both sides use is declared here and nowhere else.
 * Layout rules: fixed-width types only, explicit padding, one size assert per
 * struct. Any change to a layout or to the meaning of a field bumps
 * EDGESHED_ABI_VERSION: userspace refuses a pinned data plane of another ABI.
 */
#ifndef EDGESHED_ABI_H
#define EDGESHED_ABI_H

#ifdef __bpf__
/* BPF side: vmlinux.h already provides __u8..__u64. */
#else
#include <linux/types.h>
#endif

#ifdef __cplusplus
#define EDGESHED_ABI_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define EDGESHED_ABI_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

#define EDGESHED_ABI_VERSION 19

#define EDGESHED_MAC_LEN 6
/* One IPv4 host; one IPv6 subnet, which a single client usually holds. */
#define EDGESHED_DEFAULT_HASH_PREFIX4 32
#define EDGESHED_DEFAULT_HASH_PREFIX6 64

/* Protocols of a new connection; counters and events carry one. */
enum edgeshed_protocol {
	EDGESHED_PROTO_TCP = 0,	 /* a SYN */
	EDGESHED_PROTO_QUIC = 1, /* a QUIC Initial, on UDP */
	EDGESHED_NUM_PROTOCOLS = 2,
};

/* Priority classes; lower value = more important, shed last. */
enum edgeshed_class {
	EDGESHED_CLASS_CRITICAL = 0,
	EDGESHED_CLASS_NORMAL = 1,
	EDGESHED_CLASS_BACKGROUND = 2,
	EDGESHED_NUM_CLASSES = 3,
};

/*
 * Services: a protected port served in one network namespace is a service;
 * the same port served in two (two pods on 8080) is two. What a cap reads
 * is kept per group, a service's class, so that one service's queue never
 * sheds another's connections: the live counts per class (es_*_cls), the
 * cohorts, the token buckets and the policies. Service 0 is every port's
 * unless the controller gives it another, so its groups are the classes'
 * ids. The counters (es_stats) stay per class, all services summed.
 */
#define EDGESHED_MAX_SERVICES 32
#define EDGESHED_NUM_GROUPS (EDGESHED_MAX_SERVICES * EDGESHED_NUM_CLASSES)

static inline __u32 edgeshed_group(__u32 service, __u32 class_id)
{
	return service * EDGESHED_NUM_CLASSES + class_id;
}

static inline __u32 edgeshed_group_class(__u32 group)
{
	return group % EDGESHED_NUM_CLASSES;
}

static inline __u32 edgeshed_group_service(__u32 group)
{
	return group / EDGESHED_NUM_CLASSES;
}

enum edgeshed_mode {
	EDGESHED_MODE_OFF = 0,	   /* pass everything, count nothing but passes */
	EDGESHED_MODE_OBSERVE = 1, /* decide, count would-shed, pass */
	EDGESHED_MODE_ENFORCE = 2, /* decide and shed */
	EDGESHED_NUM_MODES = 3,
};

enum edgeshed_action {
	EDGESHED_ACTION_DROP = 0, /* XDP_DROP / TC_ACT_SHOT */
	EDGESHED_ACTION_RST = 1,  /* answer the SYN with RST+ACK */
	EDGESHED_NUM_ACTIONS = 2,
};

/* How the probabilistic admission draw is made. */
enum edgeshed_draw {
	/* Hash of the source address and a rotating salt: a client is
	 * consistently admitted or shed within one salt period. */
	EDGESHED_DRAW_SOURCE_HASH = 0,
	EDGESHED_DRAW_RANDOM = 1, /* independent per SYN or Initial */
	EDGESHED_NUM_DRAWS = 2,
};

/* Where the program is attached; recorded for status and detach. */
enum edgeshed_hook {
	EDGESHED_HOOK_NONE = 0,
	EDGESHED_HOOK_XDP = 1,	       /* native (driver) XDP */
	EDGESHED_HOOK_XDP_GENERIC = 2, /* skb-mode XDP */
	EDGESHED_HOOK_TC = 3,	       /* clsact ingress */
	EDGESHED_NUM_HOOKS = 4,
};

/* What a frame starts with on the attached device: an Ethernet header, or
 * (IP tunnels, WireGuard, tun) the IP header itself. The data plane's
 * es_framing, set at load. */
enum edgeshed_framing {
	EDGESHED_FRAMING_ETHERNET = 0,
	EDGESHED_FRAMING_IP = 1,
};

/* shed_frac is in units of 1/EDGESHED_FRAC_ONE. */
#define EDGESHED_FRAC_ONE 65536u

/* Per-CPU counters, one row per class plus per-packet counters. */
enum edgeshed_counter {
	EDGESHED_CTR_ADMITTED = 0,
	EDGESHED_CTR_SHED_CAP,		/* in-flight cap reached */
	EDGESHED_CTR_SHED_FRAC,		/* probabilistic admission */
	EDGESHED_CTR_SHED_RATE,		/* token bucket empty */
	EDGESHED_CTR_WOULD_SHED_CAP,	/* observe mode counterparts */
	EDGESHED_CTR_WOULD_SHED_FRAC,
	EDGESHED_CTR_WOULD_SHED_RATE,
	EDGESHED_CTR_FAIL_OPEN,		/* heartbeat stale: admitted */
	EDGESHED_CTR_PASS_MODE_OFF,	/* mode off: admitted */
	EDGESHED_CTR_RST_SENT,
	EDGESHED_CTR_RST_CAPPED,	/* RST budget spent: dropped instead */
	/* A new request on an open connection, over the class's in-flight
	 * cap on a port that refuses them: reset before the server read it. */
	EDGESHED_CTR_REQUEST_REFUSED,
	EDGESHED_CTR_WOULD_REFUSE_REQUEST, /* observe mode counterpart */
	/* An idle connection of a port that reclaims them, aborted by the
	 * daemon's choice while its class was over the cap (reclaim_idle.bpf.h). */
	EDGESHED_CTR_RECLAIMED,
	EDGESHED_CTR_WOULD_RECLAIM, /* observe mode counterpart */
	EDGESHED_NUM_COUNTERS,
};

/*
 * Counters that belong to no class. Packets of established flows and non-TCP
 * traffic are deliberately not counted: that path must stay as cheap as a
 * bare XDP_PASS.
 */
enum edgeshed_global_counter {
	EDGESHED_GCTR_UNPARSED = 0,	/* could not be parsed: passed */
	EDGESHED_GCTR_FRAGMENT,		/* IP fragment: passed */
	EDGESHED_GCTR_UNPROTECTED,	/* SYN to an unprotected port: passed */
	EDGESHED_GCTR_NO_POLICY,	/* a map lacked its entry: passed */
	EDGESHED_GCTR_RST_FAILED,	/* RST could not be built: dropped */
	EDGESHED_GCTR_EVENTS_LOST,	/* event ring buffer full */
	/* Shed SYN from or to a group, broadcast or unspecified address:
	 * dropped, never answered (a RST would spoof or flood). */
	EDGESHED_GCTR_RST_NOT_UNICAST,
	/* Shed SYN not addressed to this host (XDP: another destination MAC;
	 * TC: not PACKET_HOST): dropped, never answered. */
	EDGESHED_GCTR_RST_NOT_TO_HOST,
	/* Shed SYN or QUIC Initial in a first IP fragment: dropped, never
	 * answered, so the datagram can never be reassembled into a
	 * connection. */
	EDGESHED_GCTR_SHED_FRAGMENT,
	/* Headers deeper than the parser walks (VLAN tags, IPv6 extension
	 * headers, a first fragment's TCP header cut short): passed, or
	 * dropped (the next counter) while their class sheds. */
	EDGESHED_GCTR_TOO_DEEP,
	EDGESHED_GCTR_SHED_TOO_DEEP,
	/* SYN or QUIC Initial to be shed with a bad IPv4 header checksum:
	 * passed, the kernel drops it. */
	EDGESHED_GCTR_BAD_CHECKSUM,
	/* Shed SYN whose RST would exceed the reflection limit of its
	 * sender's prefix: dropped instead (also counted as rst_capped). */
	EDGESHED_GCTR_RST_REFLECT_LIMITED,
	/* QUIC Initial in a UDP datagram under 1,200 bytes, which a server
	 * must discard (RFC 9000 14.1): dropped in enforce mode. */
	EDGESHED_GCTR_QUIC_UNDERSIZED,
	/* A request to refuse whose RSTs could not be written or sent:
	 * dropped, so that the server never reads it (the client sends it
	 * again). */
	EDGESHED_GCTR_REQUEST_RST_FAILED,
	/* SYN, QUIC Initial or frame too deep to a protected port but to a
	 * destination not this host's (EDGESHED_CFG_F_DESTINATIONS): routed
	 * through, passed untouched, no token taken. */
	EDGESHED_GCTR_TRANSIT,
	/* Shed SYN at native XDP on a NIC that strips the tags of the VLANs
	 * the host serves (EDGESHED_CFG_F_RX_VLAN_STRIPPED), whose tag the
	 * driver cannot tell: dropped, since its RST would leave untagged, on
	 * the native VLAN. */
	EDGESHED_GCTR_RST_VLAN_UNKNOWN,
	/* New connections (and requests refused on open connections) shed by
	 * a class's queue gate rather than its in-flight cap; counted as the
	 * cap's too (shed_cap, would_shed_cap, request_refused). */
	EDGESHED_GCTR_QUEUE_GATE,
	EDGESHED_NUM_GLOBAL_COUNTERS,
};

/* Value of the single-entry per-CPU counters map. The QUIC rows leave the
 * counters of the in-flight cap and of RSTs at 0: neither applies. */
struct edgeshed_stats {
	__u64 cls[EDGESHED_NUM_CLASSES][EDGESHED_NUM_COUNTERS]; /* TCP */
	__u64 global[EDGESHED_NUM_GLOBAL_COUNTERS];
	__u64 quic_cls[EDGESHED_NUM_CLASSES][EDGESHED_NUM_COUNTERS];
};
EDGESHED_ABI_ASSERT(sizeof(struct edgeshed_stats) ==
			    sizeof(__u64) * (2 * (int)EDGESHED_NUM_CLASSES *
				     (int)EDGESHED_NUM_COUNTERS +
				 (int)EDGESHED_NUM_GLOBAL_COUNTERS),
		    "stats ABI");

/*
 * Reflection limit: the RSTs sent toward one network, the prefix of the shed
 * SYNs' sender. A spoofed flood can aim the host's RSTs at a victim network;
 * that network then receives at most per_sec RSTs a second once its burst
 * is spent. The burst lets a real burst from one network (a NAT, an office)
 * be refused at once rather than by a 1 s retransmission. The per-CPU budget
 * (rst_per_sec_per_cpu) is the global ceiling above it.
 */
struct edgeshed_rst_reflect {
	__u32 per_sec; /* 0: no limit per prefix, the ceiling alone */
	__u32 burst;   /* 0: 1 */
	__u8 prefix4;  /* 0: EDGESHED_DEFAULT_RST_REFLECT_PREFIX4 */
	__u8 prefix6;  /* 0: EDGESHED_DEFAULT_RST_REFLECT_PREFIX6 */
	__u16 per_conn; /* RSTs a network earns per connection it establishes; 0: none */
};
EDGESHED_ABI_ASSERT(sizeof(struct edgeshed_rst_reflect) == 12, "RST reflection ABI");

#define EDGESHED_DEFAULT_RST_REFLECT_PER_SEC 1000u
/* 2,000 refusals in 0.1 s from one network fit, with room. */
#define EDGESHED_DEFAULT_RST_REFLECT_BURST 4000u
/* A spoofer cannot complete a handshake from its victim's addresses, so a
 * network that establishes connections is real: clients behind one NAT, shed
 * up to 8 times as often as they are admitted (plus per_sec), are still
 * refused, not dropped. */
#define EDGESHED_DEFAULT_RST_REFLECT_PER_CONN 8u
#define EDGESHED_DEFAULT_RST_REFLECT_PREFIX4 24
#define EDGESHED_DEFAULT_RST_REFLECT_PREFIX6 48
/* Networks the limit tracks at once (LRU): about 1.5 MiB. Networks not
 * tracked yet are granted their first RST from one shared budget of the
 * same rate and burst, so that no flood from many networks can evict a
 * victim's entry fast enough to earn it a fresh burst more than once every
 * ENTRIES / per_sec seconds. */
#define EDGESHED_RST_REFLECT_ENTRIES 16384
/*
 * A victim holding a larger prefix must not receive the limit once per
 * network of the configured size: the sender's address is also limited at
 * these aggregates (each coarser than the configured prefix), with the same
 * rate, burst and earned credit. Any /16 or /8 (IPv6: /32 or /16) thus gets
 * what one network gets.
 */
#define EDGESHED_RST_REFLECT_LEVELS 3
#define EDGESHED_RST_REFLECT_AGGREGATE4_A 16
#define EDGESHED_RST_REFLECT_AGGREGATE4_B 8
#define EDGESHED_RST_REFLECT_AGGREGATE6_A 32
#define EDGESHED_RST_REFLECT_AGGREGATE6_B 16

/* Key of the reflection limit's LRU map: the sender's address, cut to the
 * prefix. Value: the GCRA's theoretical arrival time of the next RST, ns. */
struct edgeshed_rst_reflect_key {
	__u8 family; /* AF_INET or AF_INET6 */
	__u8 prefix; /* the level's prefix length */
	__u16 _pad;
	__u32 addr[4]; /* network byte order; IPv4 uses [0] */
};
EDGESHED_ABI_ASSERT(sizeof(struct edgeshed_rst_reflect_key) == 20, "RST reflection key ABI");

/* Rarely written settings (attach, CLI, config reload). */
struct edgeshed_config {
	__u32 abi_version;	    /* EDGESHED_ABI_VERSION; read first */
	__u32 mode;		    /* enum edgeshed_mode */
	__u32 action;		    /* enum edgeshed_action */
	__u32 draw;		    /* enum edgeshed_draw */
	__u32 hook;		    /* enum edgeshed_hook */
	__u32 rst_per_sec_per_cpu;  /* RST budget; above it, drop */
	__u64 heartbeat_timeout_ns; /* 0: never fail open (fail-static) */
	__u32 src4_prefixes;	    /* entries in the IPv4 override trie */
	__u32 src6_prefixes;	    /* entries in the IPv6 override trie */
	__u32 flags;		    /* EDGESHED_CFG_F_* */
	__u32 events_per_sec_per_cpu; /* shed events budget; 0: no events */
	__u32 event_sample;	    /* 1 in N sheds is a candidate event; 0, 1: all */
	/* Inode of the attached interface's network namespace: the tracker
	 * counts only that namespace's connections. 0: every namespace. */
	__u32 netns_ino;
	/* The attached interface's MAC: at XDP, a shed SYN to another
	 * destination MAC is dropped, never answered with a RST. */
	__u8 if_mac[EDGESHED_MAC_LEN];
	/* Source-hash draw: the leading bits of the address it hashes, so a
	 * client cannot retry from the next address of its own network until
	 * it is admitted. 0: EDGESHED_DEFAULT_HASH_PREFIX4/6. */
	__u8 hash_prefix4;
	__u8 hash_prefix6;
	struct edgeshed_rst_reflect rst_reflect;
	__u32 _pad;
};
EDGESHED_ABI_ASSERT(sizeof(struct edgeshed_config) == 80, "config ABI");

/* clsact qdisc was created by edgeshed, so detach removes it. */
#define EDGESHED_CFG_F_OWNS_QDISC (1u << 0)
/* Only destinations in es_dst4 / es_dst6 (the host's local addresses and
 * routes, and the operator's destination prefixes) are decided; the rest is
 * transit. Without it, every destination is. */
#define EDGESHED_CFG_F_DESTINATIONS (1u << 1)
/* At native XDP, the NIC strips VLAN tags (rx-vlan-offload) and the host
 * serves VLANs on it (a VLAN device): a frame's tag is not in its bytes,
 * only in what the driver tells through bpf_xdp_metadata_rx_vlan_tag(). */
#define EDGESHED_CFG_F_RX_VLAN_STRIPPED (1u << 2)

/*
 * Default RST budget per CPU and second. A RST is smaller than the SYN it
 * answers, so it amplifies nothing; the budget only bounds a spoofed flood's
 * reflection. It must exceed the sheds of a real overload (5x a service of
 * 500/s sheds 2,000/s, mostly on one receive queue): a shed SYN over the
 * budget is dropped, and its client waits a 1 s retransmission.
 */
#define EDGESHED_DEFAULT_RST_PER_SEC_PER_CPU 10000u

/*
 * Admission policy of one class. All-zero admits everything: a data plane
 * whose controller never wrote a policy fails open by construction.
 */
struct edgeshed_class_policy {
	__u32 shed_frac;      /* of EDGESHED_FRAC_ONE; 0: none, ONE: all */
	__u32 inflight_cap;   /* requests in service (see es_inflight); 0: no cap */
	__u32 tokens_per_sec; /* new connections/s; 0: no rate limit */
	__u32 burst;	      /* token bucket depth */
	__u32 conn_cap;	      /* established connections; 0: no cap */
	/* The queue gate: while most of the class's requests that entered
	 * service this long ago (microseconds) are still in service, its new
	 * connections are shed as at the in-flight cap (see es_cohorts);
	 * 0: no gate. */
	__u32 queue_age_us;
};
EDGESHED_ABI_ASSERT(sizeof(struct edgeshed_class_policy) == 24,
		    "class policy ABI");

/*
 * Policies are double-buffered: the controller fills the inactive slot of the
 * policy map, then publishes it by writing active_slot in the control map
 * (an aligned 32-bit store, which the data plane reads in one load). A SYN
 * therefore sees one tick's policy for all classes, never a mix.
 */
#define EDGESHED_POLICY_SLOTS 2

/* A class's rate as its GCRA reads it: 1e9 / tokens_per_sec, and that
 * times (burst - 1). Derived by the publisher (Maps::publish), so that no
 * SYN pays for a division. */
struct edgeshed_rate {
	__u64 interval_ns;
	__u64 tolerance_ns;
};
EDGESHED_ABI_ASSERT(sizeof(struct edgeshed_rate) == 16, "rate ABI");

struct edgeshed_policy_set {
	/* Per group (edgeshed_group()): service 0's classes first. */
	struct edgeshed_class_policy cls[EDGESHED_NUM_GROUPS];
	__u32 level;	 /* pressure level that produced it, for status */
	__u32 _pad;
	__u64 generation; /* tick counter of the controller */
	struct edgeshed_rate rate[EDGESHED_NUM_GROUPS]; /* of cls[] */
};
EDGESHED_ABI_ASSERT(sizeof(struct edgeshed_policy_set) ==
			    16 + EDGESHED_NUM_GROUPS * (24 + 16),
		    "policy set ABI");

/* Written by the controller every tick. */
struct edgeshed_control {
	__u64 heartbeat_ns; /* CLOCK_MONOTONIC == bpf_ktime_get_ns() */
	__u32 active_slot;  /* index into the policy map */
	__u32 salt;	    /* for EDGESHED_DRAW_SOURCE_HASH, rotated */
};
EDGESHED_ABI_ASSERT(sizeof(struct edgeshed_control) == 16, "control ABI");

/* Port map: one entry per destination port (host byte order key), for TCP
 * and for QUIC on the UDP port of the same number. */
struct edgeshed_port {
	__u8 protocols;	     /* EDGESHED_PORT_*; 0: not protected, all pass */
	__u8 class_id;	     /* enum edgeshed_class, of both protocols */
	__u8 latency_slot;   /* es_latency index, or EDGESHED_LATENCY_NO_SLOT */
	__u8 requests;	     /* enum edgeshed_port_requests (TCP) */
	/* Inode of the network namespace whose connections of this port the
	 * tracker counts (a container's, its service behind this host's
	 * interface); 0: the interface's own (edgeshed_config.netns_ino). */
	__u32 netns_ino;
	/* That namespace's id in the interface's (RTM_NEWNSID), where the
	 * request filter looks its sockets up; negative: none known, and none
	 * of its requests is refused. Unused for the interface's own. */
	__s32 netns_id;
	__u8 timers; /* enum edgeshed_port_timers (TCP) */
	/* Its service (< EDGESHED_MAX_SERVICES), or EDGESHED_SERVICE_BY_NETNS. */
	__u8 service;
	__u8 pad[2];
};
EDGESHED_ABI_ASSERT(sizeof(struct edgeshed_port) == 16, "port ABI");

/*
 * A port served in several namespaces (edgeshed_port.service): es_ports
 * holds what all of them share (protocols, requests, timers), and
 * es_services, keyed by namespace and port, the rest of each one's entry
 * (service, class_id, latency_slot, netns_ino, netns_id). A socket's
 * namespace is its own; a SYN's is its destination's (edgeshed_dst_value).
 * Keyed by the namespace's cookie, which, unlike its inode, is never
 * reused while the host runs: a pod made anew is a new service.
 */
#define EDGESHED_SERVICE_BY_NETNS 0xff

struct edgeshed_service_key {
	__u64 netns_cookie;
	__u32 port; /* host byte order */
	__u32 _pad;
};
EDGESHED_ABI_ASSERT(sizeof(struct edgeshed_service_key) == 16, "service key ABI");

#define EDGESHED_MAX_SERVICE_KEYS 1024

/* es_group_sheds: per group, per CPU, the new connections shed (enforce:
 * cap, fraction or rate) and the requests refused on open connections,
 * which the counters (es_stats, per class) sum over the services: what the
 * law of a service of its own reads of its sheds. */

/* Which programs time a TCP port's requests. Both kinds look it up after
 * the socket's storage (only a protected socket gets that far), so a port
 * switched by a reload is timed by the new kind from its next segment. A
 * segment in flight at the switch may be seen by both (its connection then
 * marked overlapped) or by neither (that request uncounted). */
enum edgeshed_port_timers {
	/* The tracepoints on every socket of the host (sk_data_ready,
	 * tcp_sendmsg_locked). */
	EDGESHED_TIMERS_TRACEPOINTS = 0,
	/* cgroup_skb ingress and egress on the service's cgroup: the host's
	 * other sockets pay nothing for a send or a receive. */
	EDGESHED_TIMERS_CGROUP = 1,
	EDGESHED_NUM_PORT_TIMERS = 2,
};

/* edgeshed_port.netns_ino of a service whose namespace is gone (its pod
 * removed): no socket is counted for it until a namespace comes again.
 * Never a namespace's inode: nsfs numbers them from 0xF0000000. */
#define EDGESHED_NETNS_NONE 1

/* What a port does with the connections already open while the class's
 * requests in service are at its cap (the config's keepalive). */
enum edgeshed_port_requests {
	EDGESHED_REQUESTS_PASS = 0,    /* the cap binds at the SYN only */
	/* Reclaim, and a new request on an open connection at the cap: both
	 * ends reset, the request unread. */
	EDGESHED_REQUESTS_REFUSE = 1,
	/* Idle connections aborted, longest idle first, while the class is
	 * over its cap. */
	EDGESHED_REQUESTS_RECLAIM = 2,
	EDGESHED_NUM_PORT_REQUESTS = 3,
};

#define EDGESHED_PORT_TCP (1u << EDGESHED_PROTO_TCP)
#define EDGESHED_PORT_QUIC (1u << EDGESHED_PROTO_QUIC)

#define EDGESHED_NUM_PORTS 65536

/* Source-prefix override keys (LPM trie layout: prefixlen first). */
struct edgeshed_lpm_v4 {
	__u32 prefixlen;
	__u8 addr[4]; /* network byte order */
};
EDGESHED_ABI_ASSERT(sizeof(struct edgeshed_lpm_v4) == 8, "lpm v4 ABI");

struct edgeshed_lpm_v6 {
	__u32 prefixlen;
	__u8 addr[16]; /* network byte order */
};
EDGESHED_ABI_ASSERT(sizeof(struct edgeshed_lpm_v6) == 20, "lpm v6 ABI");

struct edgeshed_class_value {
	__u32 class_id; /* enum edgeshed_class */
};
EDGESHED_ABI_ASSERT(sizeof(struct edgeshed_class_value) == 4, "class ABI");

#define EDGESHED_MAX_PREFIXES 4096

/* Destinations that are this host's (es_dst4, es_dst6; LPM keys as above):
 * why each one is. */
enum edgeshed_destination_kind {
	EDGESHED_DST_LOCAL = 1,	     /* a local address or route of the host */
	EDGESHED_DST_CONFIGURED = 2, /* [dataplane] destinations */
};

struct edgeshed_dst_value {
	__u32 kind; /* enum edgeshed_destination_kind */
	__u32 _pad;
	/* The namespace the address is in, where a port served in several
	 * looks its service up (es_services); 0: none known. */
	__u64 netns_cookie;
};
EDGESHED_ABI_ASSERT(sizeof(struct edgeshed_dst_value) == 16, "destination ABI");

#define EDGESHED_MAX_DESTINATIONS 4096

/*
 * Live counts kept by the tracker programs, each a __u64 per local port
 * (EDGESHED_NUM_PORTS entries, host byte order; a port served in several
 * namespaces sums theirs) and per group (EDGESHED_NUM_GROUPS entries, the
 * "_cls" maps; service 0's are the classes'):
 *  - es_inflight, es_inflight_cls: requests in service. A connection of a
 *    protected port has a request in service from the moment request bytes
 *    are queued on it for the server (read or not) while it had none, until
 *    the server sends on it or is done with it (its close, or a reset). A
 *    send that leaves bytes unread (a pipelined request already arrived)
 *    keeps it in service. So it counts connections with work outstanding:
 *    idle keep-alive connections count 0, a long poll the server holds
 *    counts 1, several requests outstanding on one connection (pipelined,
 *    or HTTP/2 streams) count 1.
 *  - es_conns, es_conns_cls: established connections, accepted or still in
 *    the accept queue, until the server is done with them.
 *  - es_inflight_peak (per group only): the most requests in service at
 *    once since the controller last reset it to 0.
 *  - es_inflight_since, es_inflight_since_cls: the sum of the times
 *    (bpf_ktime_get_ns()) at which the requests now in service entered it,
 *    modulo 2^64. count x now - sum is the sum of their ages, exact as long
 *    as that fits in 64 bits (584 years of requests). Per CPU, summed by the
 *    reader: a request leaves on whichever CPU answers it, and the sum
 *    stays exact, while no CPU adds to a cache line another one holds.
 */

/*
 * The queue gate's evidence (es_cohorts): per group, a ring of
 * EDGESHED_COHORT_SLICES cohorts, the requests that entered service in one
 * slice of time, while the class's policy has a queue_age_us. A slice is
 * 2^shift ns, shift = edgeshed_cohort_shift(queue_age), between an eighth
 * and a quarter of that age, so that the two slices just older than it hold
 * requests of ages between 1x and 1.5x of it. The data plane reads the two:
 * with at least EDGESHED_COHORT_MIN_ARRIVED requests, three quarters of
 * them still in service means that most requests now wait longer than the
 * age, which is the gate's evidence of a queue, seen before those requests
 * are answered (a burst of a busy service delays some of a cohort, a
 * standing queue all of it).
 */
#define EDGESHED_COHORT_SLICES 16
#define EDGESHED_COHORT_MIN_ARRIVED 4

struct edgeshed_cohort {
	__u64 slice;   /* entry time >> shift of its requests */
	__u32 arrived; /* requests that entered service in the slice */
	__s32 open;    /* of those, still in service */
};
EDGESHED_ABI_ASSERT(sizeof(struct edgeshed_cohort) == 16, "cohort ABI");

/* floor(log2(age_ns / 4)): a slice of a quarter of the age at the most. */
static inline __u32 edgeshed_cohort_shift(__u64 age_ns)
{
	__u64 v = age_ns >> 2;
	__u32 r = 0;

	if (v >> 32) {
		v >>= 32;
		r += 32;
	}
	if (v >> 16) {
		v >>= 16;
		r += 16;
	}
	if (v >> 8) {
		v >>= 8;
		r += 8;
	}
	if (v >> 4) {
		v >>= 4;
		r += 4;
	}
	if (v >> 2) {
		v >>= 2;
		r += 2;
	}
	if (v >> 1)
		r += 1;
	return r;
}

/* The newer of the two slices the evidence reads at `now`: every request
 * in it entered service more than age_ns ago. */
static inline __u64 edgeshed_cohort_due(__u64 now, __u64 age_ns)
{
	return ((now - age_ns) >> edgeshed_cohort_shift(age_ns)) - 1;
}

/* The evidence of a queue in the two slices' counts, summed. */
static inline int edgeshed_cohorts_queued(__u32 arrived, __s32 open)
{
	return arrived >= EDGESHED_COHORT_MIN_ARRIVED && open > 0 &&
	       (__u32)open * 4 >= arrived * 3;
}

/*
 * Records the accept-queue iterator (iter/tcp) writes, one per socket of a
 * protected local port: each listener with its queue depth, and each
 * established connection still waiting in an accept queue with its age.
 */
enum edgeshed_aq_kind {
	EDGESHED_AQ_LISTENER = 1,
	EDGESHED_AQ_WAITING = 2,
};

struct edgeshed_aq_record {
	__u16 port;	      /* local port, host byte order */
	__u8 kind;	      /* enum edgeshed_aq_kind */
	__u8 _pad;
	__u32 depth;	      /* listener: connections in its accept queue */
	__u32 max_depth;      /* listener: its backlog limit */
	__u32 _pad2;
	__u64 waiting_ns;     /* waiting: time since the handshake completed */
};
EDGESHED_ABI_ASSERT(sizeof(struct edgeshed_aq_record) == 24, "aq record ABI");

/*
 * One idle connection of a port that reclaims them, as the idle walk
 * (iter/tcp edgeshed_idle) writes it: nothing unread, everything sent
 * acknowledged, no request in service. The daemon picks the longest idle
 * and puts their cookies in es_reclaim for the reclaim walk.
 */
struct edgeshed_idle_conn {
	__u64 cookie;	/* the socket's cookie */
	__u64 idle_ns;	/* since its last segment, either way */
	__u16 port;	/* local port, host byte order */
	__u8 group;	/* its service's class, edgeshed_group() */
	__u8 _pad[5];
};
EDGESHED_ABI_ASSERT(sizeof(struct edgeshed_idle_conn) == 24, "idle connection ABI");

/* Cookies the daemon may choose for one reclaim walk (es_reclaim); nginx
 * closes at most 32 idle connections at a time when it runs short. */
#define EDGESHED_RECLAIM_BATCH 32

/*
 * A sampled shed decision (of a new connection, or of a request on an open
 * one), written to the es_events ring buffer so that
 * operators can see who is shed and why. Sampling (1 in event_sample) and a
 * per-CPU budget per second keep a flood from becoming an event flood.
 */
enum edgeshed_event_outcome {
	EDGESHED_EVENT_DROP = 0,	/* shed by drop */
	EDGESHED_EVENT_RST = 1,		/* shed, answered with RST */
	EDGESHED_EVENT_RST_CAPPED = 2,	/* shed, RST budget spent: dropped */
	EDGESHED_EVENT_WOULD_SHED = 3,	/* observe mode: passed */
	/* A new request on an open connection (keepalive = "refuse"): both
	 * ends reset before the server read it; sport is the client's. */
	EDGESHED_EVENT_REQUEST_REFUSED = 4,
	EDGESHED_EVENT_WOULD_REFUSE_REQUEST = 5, /* observe mode: passed */
	/* An idle connection aborted (keepalive = "reclaim" or "refuse"):
	 * reason idle; sport is the client's. */
	EDGESHED_EVENT_RECLAIMED = 6,
	EDGESHED_EVENT_WOULD_RECLAIM = 7, /* observe mode: left open */
	EDGESHED_NUM_EVENT_OUTCOMES = 8,
};

/* Shed reasons, in the order of the SHED_* counters. */
enum edgeshed_shed_reason {
	EDGESHED_REASON_NONE = 0,
	EDGESHED_REASON_CAP = 1,
	EDGESHED_REASON_FRAC = 2,
	EDGESHED_REASON_RATE = 3,
	EDGESHED_REASON_IDLE = 4, /* a reclaimed idle connection */
	EDGESHED_NUM_SHED_REASONS = 5,
};
/* The data plane counts a shed as EDGESHED_CTR_SHED_CAP + reason -
 * EDGESHED_REASON_CAP (and WOULD_SHED_* alike): both enums keep one order. */
EDGESHED_ABI_ASSERT(EDGESHED_CTR_SHED_FRAC - EDGESHED_CTR_SHED_CAP ==
				    EDGESHED_REASON_FRAC - EDGESHED_REASON_CAP &&
			    EDGESHED_CTR_SHED_RATE - EDGESHED_CTR_SHED_CAP ==
				    EDGESHED_REASON_RATE - EDGESHED_REASON_CAP &&
			    EDGESHED_CTR_WOULD_SHED_FRAC - EDGESHED_CTR_WOULD_SHED_CAP ==
				    EDGESHED_REASON_FRAC - EDGESHED_REASON_CAP &&
			    EDGESHED_CTR_WOULD_SHED_RATE - EDGESHED_CTR_WOULD_SHED_CAP ==
				    EDGESHED_REASON_RATE - EDGESHED_REASON_CAP,
		    "shed counters follow the shed reasons' order");

struct edgeshed_event {
	__u64 ktime_ns;	  /* CLOCK_MONOTONIC (coarse) */
	__u8 saddr[16];	  /* network byte order; IPv4 in the first 4 */
	__u16 sport;	  /* host byte order */
	__u16 dport;	  /* host byte order */
	__u8 family;	  /* AF_INET or AF_INET6 */
	__u8 class_id;	  /* enum edgeshed_class */
	__u8 reason;	  /* enum edgeshed_shed_reason */
	__u8 outcome;	  /* enum edgeshed_event_outcome */
	__u8 protocol;	  /* enum edgeshed_protocol */
	__u8 service;	  /* of the connection's port (abi.h, services) */
	__u8 _pad[6];
};
EDGESHED_ABI_ASSERT(sizeof(struct edgeshed_event) == 40, "event ABI");

/* Size of the es_events ring buffer: a power of two multiple of the page. */
#define EDGESHED_EVENTS_RING_BYTES (256 * 1024)

/*
 * What the tracker remembers of a passively opened connection on a protected
 * port, in the es_sk_state socket storage. Pinned with the data plane, so a
 * layout change is an ABI change (adoption reuses the pinned map).
 */
struct edgeshed_sk_state {
	__u64 established_ns; /* passive open completed (bpf_ktime_get_ns) */
	__u64 request_ns;     /* a request in service since; 0: none */
	__u16 port;	      /* local port, host byte order */
	__u8 group;	      /* its service's class, edgeshed_group() */
	__u8 counted;	      /* in the connection counts */
	__u8 latency_slot;    /* es_latency index, or EDGESHED_LATENCY_NO_SLOT */
	__u8 close_measured;  /* the server's close was recorded */
	/* The request in service started at a send that left a pipelined
	 * request unread: counted, but its time is not the request's. */
	__u8 untimed;
	/* Bytes arrived while a request was in service: a second request
	 * (pipelined, HTTP/2 streams) or more of the first. What the server
	 * still owes such a connection is unknown from here on, so it is
	 * never refused nor reclaimed (keepalive = "refuse", "reclaim"). */
	__u8 overlapped;
	/* The cgroup timers' (EDGESHED_TIMERS_CGROUP) view of the stream, which
	 * their ingress sees before the socket does: the end of the newest
	 * request bytes seen (a segment may wait in the backlog, not yet in
	 * rcv_nxt), and where the server's writes stood when the request in
	 * service arrived (an answer is data written after it; the rest of an
	 * earlier response still draining is not). Sequence numbers. */
	__u32 rcv_end;
	__u32 snd_mark;
};
EDGESHED_ABI_ASSERT(sizeof(struct edgeshed_sk_state) == 32, "sk state ABI");

/*
 * Latency histograms measured in the kernel on the server's sockets, one
 * slot per protected port (at most EDGESHED_MAX_LATENCY_PORTS ports are
 * measured; set_ports assigns the slots and writes es_latency_ports).
 */
enum edgeshed_latency_measure {
	/* Request arrival (no response outstanding) to the first byte sent. */
	EDGESHED_LATENCY_RESPONSE = 0,
	/* Passive open completed to the server's close. */
	EDGESHED_LATENCY_CONNECTION = 1,
	EDGESHED_NUM_LATENCY_MEASURES = 2,
};

#define EDGESHED_MAX_LATENCY_PORTS 32
#define EDGESHED_LATENCY_NO_SLOT 0xff
EDGESHED_ABI_ASSERT(EDGESHED_MAX_LATENCY_PORTS < EDGESHED_LATENCY_NO_SLOT,
		    "latency slots fit the port entry");

/*
 * Log-linear buckets: values are in units of 2^UNIT_SHIFT ns (1.024 us).
 * Units 0..SUB-1 have a bucket each; above, every power of two [2^e, 2^e+1)
 * is cut into SUB equal buckets, so a bucket is at most 1/SUB (12.5%) of its
 * lower bound wide. The top power of two ends at 2^(MAX_LOG2+1) units
 * (68.7 s); longer values are counted in the last bucket.
 */
#define EDGESHED_LATENCY_UNIT_SHIFT 10
#define EDGESHED_LATENCY_SUB_BITS 3
#define EDGESHED_LATENCY_SUB (1u << EDGESHED_LATENCY_SUB_BITS)
#define EDGESHED_LATENCY_MAX_LOG2 25
/* A plain number, so that a loop bound over it is no unsigned product. */
#define EDGESHED_LATENCY_BUCKETS 192
EDGESHED_ABI_ASSERT(EDGESHED_LATENCY_BUCKETS ==
			    EDGESHED_LATENCY_SUB * (EDGESHED_LATENCY_MAX_LOG2 -
						    EDGESHED_LATENCY_SUB_BITS + 2),
		    "latency bucket layout");

struct edgeshed_latency_hist {
	__u64 count;
	__u64 sum_ns;
	__u64 buckets[EDGESHED_LATENCY_BUCKETS];
};
EDGESHED_ABI_ASSERT(sizeof(struct edgeshed_latency_hist) ==
			    sizeof(__u64) * (2 + EDGESHED_LATENCY_BUCKETS),
		    "latency histogram ABI");

/* Value of the per-CPU es_latency array, indexed by latency slot. */
struct edgeshed_latency_slot {
	struct edgeshed_latency_hist measure[EDGESHED_NUM_LATENCY_MEASURES];
};
EDGESHED_ABI_ASSERT(sizeof(struct edgeshed_latency_slot) ==
			    EDGESHED_NUM_LATENCY_MEASURES *
				    sizeof(struct edgeshed_latency_hist),
		    "latency slot ABI");

/* Value of es_latency_ports, indexed by slot: whose histograms they are.
 * Written by userspace; all-zero is a free slot. */
struct edgeshed_latency_owner {
	__u16 port;   /* host byte order */
	__u8 in_use;  /* 0: free slot */
	__u8 service; /* whose, of the port's services (abi.h) */
};
EDGESHED_ABI_ASSERT(sizeof(struct edgeshed_latency_owner) == 4,
		    "latency owner ABI");

/* Bucket of a duration. BPF has no count-leading-zeros instruction, so the
 * power of two is found by a branchy binary search (v < 2^26 here). */
static inline __u32 edgeshed_latency_bucket(__u64 ns)
{
	__u64 v = ns >> EDGESHED_LATENCY_UNIT_SHIFT;
	__u32 e = 0, x;

	if (v < EDGESHED_LATENCY_SUB)
		return (__u32)v;
	if (v >> (EDGESHED_LATENCY_MAX_LOG2 + 1))
		return EDGESHED_LATENCY_BUCKETS - 1;
	x = (__u32)v;
	if (x >> 16) {
		x >>= 16;
		e += 16;
	}
	if (x >> 8) {
		x >>= 8;
		e += 8;
	}
	if (x >> 4) {
		x >>= 4;
		e += 4;
	}
	if (x >> 2) {
		x >>= 2;
		e += 2;
	}
	if (x >> 1)
		e += 1;
	/* e >= SUB_BITS: group e - SUB_BITS + 1, sub-bucket from the bits
	 * below the leading one. */
	return EDGESHED_LATENCY_SUB * (e - EDGESHED_LATENCY_SUB_BITS + 1) +
	       (__u32)((v >> (e - EDGESHED_LATENCY_SUB_BITS)) &
		       (EDGESHED_LATENCY_SUB - 1));
}

/* Lower bound of a bucket, in ns (inclusive). */
static inline __u64 edgeshed_latency_bucket_lower_ns(__u32 bucket)
{
	__u32 group = bucket / EDGESHED_LATENCY_SUB;
	__u64 sub = bucket % EDGESHED_LATENCY_SUB;

	if (group == 0)
		return sub << EDGESHED_LATENCY_UNIT_SHIFT;
	return ((EDGESHED_LATENCY_SUB + sub) << (group - 1))
	       << EDGESHED_LATENCY_UNIT_SHIFT;
}

/* Upper bound of a bucket, in ns (exclusive; the last bucket also holds
 * every longer value). */
static inline __u64 edgeshed_latency_bucket_upper_ns(__u32 bucket)
{
	__u32 group = bucket / EDGESHED_LATENCY_SUB;
	__u64 width = group == 0 ? 1 : 1ull << (group - 1);

	return edgeshed_latency_bucket_lower_ns(bucket) +
	       (width << EDGESHED_LATENCY_UNIT_SHIFT);
}

/* Maps and links are pinned under EDGESHED_PIN_ROOT/<iface>/<map name>,
 * but for the maps of the host's limits, which every interface shares (the
 * class rates, the RST ceiling and the reflection limit: a host with two
 * interfaces has one rate, not two), under EDGESHED_PIN_ROOT/
 * EDGESHED_HOST_PIN_DIR/<map name>: a name longer than any interface's. */
#define EDGESHED_PIN_ROOT "/sys/fs/bpf/edgeshed"
#define EDGESHED_HOST_PIN_DIR "host-wide-limits"

#endif /* EDGESHED_ABI_H */
