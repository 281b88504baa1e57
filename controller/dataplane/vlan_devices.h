// Whether VLAN devices sit on an interface: the host then serves VLANs whose
// tags a NIC with rx-vlan-offload strips before native XDP sees them.
#pragma once

#include <string>

#include "common/result.h"

namespace edgeshed {

// Whether an 802.1Q or 802.1ad device (kind "vlan") has ifindex as its
// lower device, in the caller's network namespace (a netlink link dump).
Result<bool> has_vlan_devices(int ifindex);

// Whether native XDP on the interface may see frames whose VLAN tag the NIC
// stripped (rx-vlan-offload) and that the host serves (a VLAN device on
// it). Without a VLAN device a tagged SYN reaches no socket anyway, so a
// NIC that strips tags does not stop an untagged network's RSTs.
Result<bool> vlan_tags_hidden_from_xdp(const std::string& iface, int ifindex);

}  // namespace edgeshed
