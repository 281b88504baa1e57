/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* How frames start on the attached device (enum edgeshed_framing). */
#ifndef EDGESHED_FRAMING_BPF_H
#define EDGESHED_FRAMING_BPF_H

#include "vmlinux.h"
#include <edgeshed/abi.h>

/* Set by userspace before the load, which is one per interface: the
 * verifier drops the other framing's paths, so an Ethernet device pays
 * nothing for IP tunnels. */
const volatile __u32 es_framing = EDGESHED_FRAMING_ETHERNET;

/* An IP device (an IP tunnel after decapsulation, WireGuard, tun): frames
 * start at the IP header, and every one was sent to this host at layer 2. */
static __always_inline int framing_is_ip(void)
{
	return es_framing == EDGESHED_FRAMING_IP;
}

static __always_inline __u32 l2_header_len(void)
{
	return framing_is_ip() ? 0 : sizeof(struct ethhdr);
}

#endif /* EDGESHED_FRAMING_BPF_H */
