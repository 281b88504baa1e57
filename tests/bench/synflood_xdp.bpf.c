// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The benchmarks' frame flood: run by BPF_PROG_TEST_RUN in live-frames mode
 * (tests/bench/synflood.cpp --frames), it writes a new SYN into the frame
 * (the template, then a random source host of the /24, port, sequence and IP
 * id, and both checksums) and redirects it out of target_ifindex. A veth hands such frames to its peer's
 * NAPI ring as XDP frames, without an skb, the way a NIC's driver sees them. */
#include "vmlinux.h"
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#define ETH_P_IP 0x0800
#define FRAME_LEN (14 + 20 + 40) /* Ethernet, IPv4, TCP with 20 B of options */

const volatile __u32 target_ifindex = 0;
/* The whole frame is written each time: live-frames mode recycles its pages
 * without restoring their contents, and a receiver that answers with XDP_TX
 * (edgeshed's RST) rewrites the page it was given. */
const volatile __u8 frame_template[FRAME_LEN] = {};

static __always_inline __u16 csum_fold(__u64 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

SEC("xdp")
int synflood_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct iphdr *ip = data + sizeof(struct ethhdr);
	struct tcphdr *tcp = (void *)ip + sizeof(*ip);
	__u32 r1 = bpf_get_prandom_u32(), r2 = bpf_get_prandom_u32();
	__u8 host = 1 + (r1 & 0xff) % 254;
	__u64 sum;

	if (data + FRAME_LEN > end)
		return XDP_ABORTED;
	/* Volatile reads: through a plain pointer the compiler would fold the
	 * template to its all-zero initialiser. */
#pragma unroll
	for (int i = 0; i < FRAME_LEN; i++)
		((__u8 *)data)[i] = frame_template[i];

	ip->saddr = (ip->saddr & bpf_htonl(0xffffff00)) | bpf_htonl(host);
	ip->id = (__u16)(r1 >> 8);
	ip->check = 0;
	ip->check = csum_fold(bpf_csum_diff(0, 0, (__be32 *)ip, sizeof(*ip), 0));

	tcp->source = bpf_htons(1024 + (r1 >> 16) % 64000);
	tcp->seq = r2;
	tcp->check = 0;
	/* Pseudo-header: addresses, protocol, TCP length; then the segment. */
	sum = (__u64)(ip->saddr >> 16) + (ip->saddr & 0xffff) + (ip->daddr >> 16) +
	      (ip->daddr & 0xffff) + bpf_htons(IPPROTO_TCP) + bpf_htons(40);
	sum = bpf_csum_diff(0, 0, (__be32 *)tcp, 40, (__u32)sum);
	tcp->check = csum_fold(sum);

	return bpf_redirect(target_ifindex, 0);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
