// A container's service found by its port: of the network namespaces of the
// host's processes, the one where a TCP socket listens on it. What an
// operator has at hand for a pod whose namespace, process and cgroup change
// with every restart, while its port does not.
#pragma once

#include <cstdint>

#include "common/result.h"
#include "daemon/service_namespaces.h"

namespace edgeshed::daemon {

// The one namespace listening on port (the daemon must see the host's
// processes: its pid namespace, and CAP_SYS_PTRACE for other users'). An
// error when none does, or more than one (the config must name it then).
Result<ServiceNamespace> namespace_listening_on(uint16_t port);

}  // namespace edgeshed::daemon
