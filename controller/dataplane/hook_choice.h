// Which hook an attach takes when the operator names none, and what to say
// when the one named will not deliver edgeshed's RSTs. On a veth, what
// native XDP transmits (XDP_TX: edgeshed's RST) reaches the peer only while
// the peer runs an XDP program of its own or has GRO on; otherwise the peer
// drops it and the client waits for its SYN's retransmission. Generic XDP
// hands the RST to the peer as any packet, so a veth gets xdp-generic.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace edgeshed {

struct HookChoice {
  uint32_t hook = 0;  // enum edgeshed_hook
  // One sentence for the operator; empty when there is nothing to say.
  std::string note;
  bool warning = false;  // the note says the hook will lose RSTs
};

// named: the hook the operator gave, if any.
HookChoice choose_hook(const std::string& iface, std::optional<uint32_t> named);

}  // namespace edgeshed
