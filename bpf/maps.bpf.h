/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Maps of the edgeshed data plane. Layouts of the values are in abi.h. */
#ifndef EDGESHED_MAPS_BPF_H
#define EDGESHED_MAPS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <edgeshed/abi.h>

#include "shared_maps.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct edgeshed_config);
} es_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct edgeshed_control);
} es_control SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, EDGESHED_POLICY_SLOTS);
	__type(key, __u32);
	__type(value, struct edgeshed_policy_set);
} es_policy SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, EDGESHED_MAX_PREFIXES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct edgeshed_lpm_v4);
	__type(value, struct edgeshed_class_value);
} es_src4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, EDGESHED_MAX_PREFIXES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct edgeshed_lpm_v6);
	__type(value, struct edgeshed_class_value);
} es_src6 SEC(".maps");

/* Destinations that are this host's: see EDGESHED_CFG_F_DESTINATIONS. */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, EDGESHED_MAX_DESTINATIONS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct edgeshed_lpm_v4);
	__type(value, struct edgeshed_dst_value);
} es_dst4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, EDGESHED_MAX_DESTINATIONS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct edgeshed_lpm_v6);
	__type(value, struct edgeshed_dst_value);
} es_dst6 SEC(".maps");

/* New connections and requests shed per group (abi.h, es_group_sheds). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, EDGESHED_NUM_GROUPS);
	__type(key, __u32);
	__type(value, __u64);
} es_group_sheds SEC(".maps");

/* The services of ports served in several namespaces (abi.h). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EDGESHED_MAX_SERVICE_KEYS);
	__type(key, struct edgeshed_service_key);
	__type(value, struct edgeshed_port);
} es_services SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct edgeshed_stats);
} es_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, EDGESHED_NUM_PORTS);
	__type(key, __u32);
	__type(value, __u64);
} es_inflight SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, EDGESHED_NUM_GROUPS);
	__type(key, __u32);
	__type(value, __u64);
} es_inflight_cls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, EDGESHED_NUM_GROUPS);
	__type(key, __u32);
	__type(value, __u64);
} es_inflight_peak SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, EDGESHED_NUM_PORTS);
	__type(key, __u32);
	__type(value, __u64);
} es_inflight_since SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, EDGESHED_NUM_GROUPS);
	__type(key, __u32);
	__type(value, __u64);
} es_inflight_since_cls SEC(".maps");

/* The queue gate's cohorts, EDGESHED_COHORT_SLICES a class (abi.h). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, EDGESHED_NUM_GROUPS * EDGESHED_COHORT_SLICES);
	__type(key, __u32);
	__type(value, struct edgeshed_cohort);
} es_cohorts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, EDGESHED_NUM_PORTS);
	__type(key, __u32);
	__type(value, __u64);
} es_conns SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, EDGESHED_NUM_GROUPS);
	__type(key, __u32);
	__type(value, __u64);
} es_conns_cls SEC(".maps");

/*
 * New-connection rate limit of each group: the time its next token is due
 * (GCRA, see take_token()). Shared by all CPUs so the rate is the configured
 * one whatever the RSS spread, and lock-free: one cache line that every CPU
 * updates with atomic adds, where a spin lock would serialise a flood.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, EDGESHED_NUM_GROUPS);
	__type(key, __u32);
	__type(value, __u64);
} es_buckets SEC(".maps");

/* What this CPU spent of a per-second budget (RSTs, events) in the current
 * one-second window. */
struct edgeshed_budget {
	__u64 window_start_ns;
	__u64 spent;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct edgeshed_budget);
} es_rst_budget SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct edgeshed_budget);
} es_event_budget SEC(".maps");

/* This CPU's last read of the coarse clock, and the jiffy it was read in. */
struct edgeshed_clock {
	__u64 jiffies;
	__u64 ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct edgeshed_clock);
} es_clock SEC(".maps");

/* Reflection limit: the networks that were sent RSTs lately, each with the
 * time its next RST is due (GCRA). Shared by all CPUs, updated atomically;
 * the LRU keeps a flood from every address within a fixed size. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, EDGESHED_RST_REFLECT_ENTRIES);
	__type(key, struct edgeshed_rst_reflect_key);
	__type(value, __u64);
} es_rst_reflect SEC(".maps");

/* The reflection limit's budget for networks not tracked yet: the due
 * time of the next first RST (GCRA, shared by all CPUs). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} es_rst_reflect_new SEC(".maps");

/* Latency histograms of the protected ports, by latency slot. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, EDGESHED_MAX_LATENCY_PORTS);
	__type(key, __u32);
	__type(value, struct edgeshed_latency_slot);
} es_latency SEC(".maps");

/* Owner port of each latency slot, written by userspace (set_ports); a
 * sample is recorded only if its connection's port still owns the slot. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, EDGESHED_MAX_LATENCY_PORTS);
	__type(key, __u32);
	__type(value, struct edgeshed_latency_owner);
} es_latency_ports SEC(".maps");

/* Sampled shed decisions for `edgeshed events` (struct edgeshed_event). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, EDGESHED_EVENTS_RING_BYTES);
} es_events SEC(".maps");

/* The idle connections the daemon chose to reclaim, by socket cookie, for
 * one reclaim walk; the walk deletes each entry it meets. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EDGESHED_RECLAIM_BATCH);
	__type(key, __u64);
	__type(value, __u8);
} es_reclaim SEC(".maps");

#endif /* EDGESHED_MAPS_BPF_H */
