// What an interface must be for edgeshed to protect it.
#pragma once

#include <string>

#include "common/result.h"

namespace edgeshed {

// The programs parse Ethernet frames. On a device without them (tun,
// WireGuard, IP tunnels) every packet would pass as unparsed: an error, so
// that nobody believes such a device protected. Loopback frames carry an
// Ethernet header and are accepted. Read in the caller's network namespace.
Status require_ethernet_framing(const std::string& iface);

}  // namespace edgeshed
