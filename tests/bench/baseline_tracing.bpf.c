// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The tracing benchmark's reference: an empty program on each tracepoint the
 * data plane's tracker and latency timers use, so that their ns per event can
 * be read against what any program there costs (the run-time statistics'
 * own clock reads included). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(baseline_set_state, struct sock *sk)
{
	return 0;
}

SEC("tp_btf/sk_data_ready")
int BPF_PROG(baseline_data_ready, struct sock *sk)
{
	return 0;
}

SEC("tp_btf/tcp_sendmsg_locked")
int BPF_PROG(baseline_sendmsg, struct sock *sk)
{
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
