/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Maps that more than one BPF object uses: the accept-queue iterator reuses
 * the data plane's pinned instances, so their definitions must be one.
 */
#ifndef EDGESHED_SHARED_MAPS_BPF_H
#define EDGESHED_SHARED_MAPS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <edgeshed/abi.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, EDGESHED_NUM_PORTS);
	__type(key, __u32);
	__type(value, struct edgeshed_port);
} es_ports SEC(".maps");

/* Value layout: struct edgeshed_sk_state in abi.h. */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct edgeshed_sk_state);
} es_sk_state SEC(".maps");

#endif /* EDGESHED_SHARED_MAPS_BPF_H */
