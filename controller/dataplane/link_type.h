// What an interface must be for edgeshed to protect it.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "common/result.h"
#include "edgeshed/abi.h"

namespace edgeshed {

using MacAddress = std::array<uint8_t, EDGESHED_MAC_LEN>;

// The interface's MAC, which the XDP program answers for. The programs
// parse Ethernet frames: on a device without them (tun, WireGuard, IP
// tunnels) every packet would pass as unparsed, so that is an error, and
// nobody believes such a device protected. Loopback frames carry an
// Ethernet header (to the all-zero address) and are accepted. Read in the
// caller's network namespace.
Result<MacAddress> read_ethernet_address(const std::string& iface);

}  // namespace edgeshed
