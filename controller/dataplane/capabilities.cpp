#include "dataplane/capabilities.h"

#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "dataplane/errno_message.h"

namespace edgeshed {
namespace {

// Numbers from linux/capability.h, which older headers lack for the two
// capabilities Linux 5.8 split out of CAP_SYS_ADMIN.
constexpr int kCapNetAdmin = 12;
constexpr int kCapSysPtrace = 19;
constexpr int kCapSysAdmin = 21;
constexpr int kCapPerfmon = 38;
constexpr int kCapBpf = 39;

bool has(uint64_t set, int cap) { return ((set >> cap) & 1U) != 0; }

}  // namespace

Status check_capabilities(uint64_t effective) {
  const bool sys_admin = has(effective, kCapSysAdmin);
  std::string missing;
  const auto need = [&](bool held, const char* name) {
    if (held) return;
    missing += missing.empty() ? "" : ", ";
    missing += name;
  };
  // Maps, programs, pins: every bpf(2) call.
  need(has(effective, kCapBpf) || sys_admin, "CAP_BPF");
  // XDP and TC programs, the XDP link, the clsact qdisc and filter.
  need(has(effective, kCapNetAdmin), "CAP_NET_ADMIN");
  // The tracing programs read kernel socket memory.
  need(has(effective, kCapPerfmon) || sys_admin, "CAP_PERFMON");
  if (missing.empty()) return {};
  return make_error("missing " + missing +
                    ": run as root, or as a user given CAP_BPF, CAP_NET_ADMIN and CAP_PERFMON "
                    "(the systemd unit's AmbientCapabilities=)");
}

namespace {

Result<uint64_t> effective_capabilities() {
  __user_cap_header_struct header{};
  header.version = _LINUX_CAPABILITY_VERSION_3;
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3]{};
  // glibc has no wrapper; libcap would be a dependency for one call.
  if (syscall(SYS_capget, &header, data) != 0) {
    return make_error("cannot read this process's capabilities: " + errno_text(errno));
  }
  return uint64_t{data[0].effective} | (uint64_t{data[1].effective} << 32);
}

}  // namespace

Status require_capabilities() {
  auto effective = effective_capabilities();
  if (!effective) return effective.error();
  return check_capabilities(*effective);
}

Status check_namespace_capabilities(uint64_t effective, bool named_by_process) {
  std::string missing;
  if (!has(effective, kCapSysAdmin)) missing = "CAP_SYS_ADMIN";
  if (named_by_process && !has(effective, kCapSysPtrace)) {
    missing += std::string(missing.empty() ? "" : ", ") + "CAP_SYS_PTRACE";
  }
  if (missing.empty()) return {};
  return make_error("missing " + missing +
                    ": a port's service in another network namespace (netns, pid, cgroup) is "
                    "counted from inside it, which needs CAP_SYS_ADMIN to enter it, and "
                    "CAP_SYS_PTRACE to find it from a process; run as root, or add them");
}

Status require_namespace_capabilities(bool named_by_process) {
  auto effective = effective_capabilities();
  if (!effective) return effective.error();
  return check_namespace_capabilities(*effective, named_by_process);
}

bool may_use_bpf() {
  auto effective = effective_capabilities();
  return effective && (has(*effective, kCapBpf) || has(*effective, kCapSysAdmin));
}

}  // namespace edgeshed
