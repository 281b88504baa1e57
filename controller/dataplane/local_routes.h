// The host's own destinations as the kernel routes them: the local routing
// table's routes of type local, which are every local address (as a /32 or
// /128) and any local route an operator added (AnyIP: `ip route add local
// 192.0.2.0/24 dev lo`). Read in the caller's network namespace.
#pragma once

#include <vector>

#include "common/ip_prefix.h"
#include "common/result.h"

namespace edgeshed {

Result<std::vector<IpPrefix>> read_local_routes();

}  // namespace edgeshed
