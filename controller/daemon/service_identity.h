// Which service listens on the protected ports now: what the learnt state
// (learnt_state.h) is checked against before a warm start.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "daemon/learnt_state.h"

namespace edgeshed::daemon {

// The listeners on `ports` in the text of /proc/net/tcp or /proc/net/tcp6,
// appended to `out` (a port listened on by several sockets counts once).
void parse_listeners(std::string_view proc_net_tcp, const std::vector<uint16_t>& ports,
                     std::vector<ServiceIdentity::Listener>& out);

// The protected TCP ports and their listeners in this network namespace.
ServiceIdentity current_service(std::vector<uint16_t> ports);

}  // namespace edgeshed::daemon
