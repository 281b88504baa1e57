/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A VLAN tag the NIC stripped before native XDP (rx-vlan-offload): read back
 * from the driver (bpf_xdp_metadata_rx_vlan_tag(), Linux 6.8, in the
 * device-bound program only) and put back on the RST, which would otherwise
 * leave untagged, on the native VLAN. Generic XDP and TC keep the tag in the
 * skb, which sends it out again with the RST.
 */
#ifndef EDGESHED_XDP_VLAN_BPF_H
#define EDGESHED_XDP_VLAN_BPF_H

#include "maps.bpf.h"
#include "rst.bpf.h"

#define ENODATA 61 /* the kfunc's "no tag" */

extern int bpf_xdp_metadata_rx_vlan_tag(const struct xdp_md *ctx,
					__be16 *vlan_proto,
					__u16 *vlan_tci) __ksym __weak;

enum stripped_vlan {
	STRIPPED_NONE,	  /* the frame came untagged, or its tag is in it */
	STRIPPED_TAG,	  /* the NIC stripped this tag */
	STRIPPED_UNKNOWN, /* the NIC strips tags, and cannot say this one's */
};

struct rx_vlan {
	__be16 proto;
	__u16 tci; /* host order, as the kfunc gives it */
};

/* dev_bound: a compile-time constant, so that the program not bound to a
 * device (which the verifier refuses the kfunc) holds no call to it. */
static __always_inline int stripped_vlan(struct xdp_md *ctx, int dev_bound,
					 struct rx_vlan *tag)
{
	const struct edgeshed_config *cfg;
	__u32 zero = 0;
	int strips, err;

	cfg = bpf_map_lookup_elem(&es_config, &zero);
	strips = cfg && (cfg->flags & EDGESHED_CFG_F_RX_VLAN_STRIPPED);
	if (!dev_bound)
		return strips ? STRIPPED_UNKNOWN : STRIPPED_NONE;
	err = bpf_xdp_metadata_rx_vlan_tag(ctx, &tag->proto, &tag->tci);
	if (!err)
		return STRIPPED_TAG;
	if (err == -ENODATA || !strips)
		return STRIPPED_NONE;
	return STRIPPED_UNKNOWN;
}

/* Puts the tag back between the MACs and the EtherType of the frame. */
static __always_inline int push_vlan_tag(struct xdp_md *ctx,
					 const struct rx_vlan *tag)
{
	__u8 macs[2 * ETH_ALEN];
	struct vlan_hdr *vh;
	struct ethhdr *eth;
	void *data_end;

	if (bpf_xdp_adjust_head(ctx, -(int)sizeof(*vh)))
		return -1;
	eth = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	vh = (void *)(eth + 1);
	if ((void *)(vh + 1) > data_end)
		return -1;
	/* The MACs moved sizeof(*vh) bytes in: back to the front. */
	__builtin_memcpy(macs, (void *)eth + sizeof(*vh), sizeof(macs));
	__builtin_memcpy(eth, macs, sizeof(macs));
	eth->h_proto = tag->proto;
	vh->h_vlan_TCI = bpf_htons(tag->tci);
	return 0;
}

#endif /* EDGESHED_XDP_VLAN_BPF_H */
