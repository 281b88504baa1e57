/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Which service of a protected port a connection is for (abi.h). */
#ifndef EDGESHED_SERVICE_BPF_H
#define EDGESHED_SERVICE_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <edgeshed/abi.h>

#include "maps.bpf.h"

/* The entry of the port's service in the namespace of `netns_cookie`: the
 * port's own where it has one service; where it has several, theirs in
 * es_services, and NULL where that namespace serves none of them. */
static __always_inline struct edgeshed_port *
service_entry(struct edgeshed_port *port, __u16 dport, __u64 netns_cookie)
{
	struct edgeshed_service_key key = {
		.netns_cookie = netns_cookie,
		.port = dport,
	};

	if (port->service != EDGESHED_SERVICE_BY_NETNS)
		return port;
	if (!netns_cookie)
		return NULL;
	return bpf_map_lookup_elem(&es_services, &key);
}

/* The group of a connection of class `class_id` to the service of `svc`;
 * EDGESHED_NUM_GROUPS where there is none. */
static __always_inline __u32 service_group(const struct edgeshed_port *svc,
					   __u32 class_id)
{
	if (svc->service >= EDGESHED_MAX_SERVICES ||
	    class_id >= EDGESHED_NUM_CLASSES)
		return EDGESHED_NUM_GROUPS;
	return edgeshed_group(svc->service, class_id);
}

#endif /* EDGESHED_SERVICE_BPF_H */
