// Whether this process may load, attach and pin edgeshed's programs: as
// root, or as a dedicated user that was given the capabilities (the systemd
// unit runs the daemon so).
#pragma once

#include <cstdint>

#include "common/result.h"

namespace edgeshed {

// The refusal, naming each capability missing from the effective set
// `effective` (bit n is capability n), or nothing. CAP_SYS_ADMIN stands in
// for CAP_BPF and CAP_PERFMON, as on kernels before 5.8.
Status check_capabilities(uint64_t effective);

// check_capabilities on this process's effective set.
Status require_capabilities();

// What a port whose service runs in another network namespace adds:
// entering it (setns(2): CAP_SYS_ADMIN), and, where a process names it
// (`pid`, `cgroup`), reading that process's /proc/PID/ns/net
// (CAP_SYS_PTRACE, for a process of another user).
Status check_namespace_capabilities(uint64_t effective, bool named_by_process);
Status require_namespace_capabilities(bool named_by_process);

// Whether this process may call bpf(2) on a pin: CAP_BPF (or CAP_SYS_ADMIN)
// in its effective set; what reading the data plane needs.
bool may_use_bpf();

}  // namespace edgeshed
