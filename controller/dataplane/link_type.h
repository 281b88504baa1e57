// What an interface must be for edgeshed to protect it.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "common/result.h"
#include "edgeshed/abi.h"

namespace edgeshed {

using MacAddress = std::array<uint8_t, EDGESHED_MAC_LEN>;

struct LinkFraming {
  uint32_t framing = EDGESHED_FRAMING_ETHERNET;  // enum edgeshed_framing
  MacAddress mac{};  // the address the XDP program answers for; zero on an IP device
};

// How the interface's frames start. Ethernet devices (and loopback, whose
// frames carry an Ethernet header to the all-zero address) have a MAC; IP
// devices (IPIP, SIT, GRE, ip6tnl, ip6gre, WireGuard, tun) carry the IP
// header first: a host that decapsulates sees the inner SYN only there.
// Any other link type is an error, so nobody believes such a device
// protected. Read in the caller's network namespace.
Result<LinkFraming> read_link_framing(const std::string& iface);

// Whether the NIC strips VLAN tags before XDP sees the frame
// (rx-vlan-offload): native XDP then finds the tag only through the driver.
Result<bool> strips_vlan_tags(const std::string& iface);

// The interface's driver as ethtool names it ("veth", "virtio_net", ...).
Result<std::string> driver_name(const std::string& iface);

}  // namespace edgeshed
