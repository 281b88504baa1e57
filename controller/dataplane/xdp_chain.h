// Sharing the XDP hook with a program that was on it first, where the kernel
// refuses libxdp's dispatcher (freplace): edgeshed takes the neighbour's
// place on the interface in one atomic swap and hands it every frame it
// passes (bpf/xdp_chain.bpf.h), as katran's root array does; detach swaps
// the neighbour back.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/result.h"

namespace edgeshed {

// The pin of edgeshed's program while it is chained: a netlink attachment,
// since the kernel will not swap a program attached so for a bpf_link.
inline constexpr const char* kXdpProgPin = "xdp_prog";

struct XdpNeighbour {
  uint32_t id;
  std::string name;
};

// The program on the interface's XDP hook, if any. hook: enum
// edgeshed_hook, XDP or XDP-generic; a program in the other mode is an
// error (the kernel runs one mode at a time).
Result<std::optional<XdpNeighbour>> xdp_neighbour(int ifindex, uint32_t hook,
                                                  const std::string& iface);

// Whether dir holds a chained program (kXdpProgPin).
bool xdp_chained(const std::string& dir);

// Puts the neighbour in the slot (slot_fd: es_xdp_next), then replaces it
// on the interface with prog_fd, expecting it there; pins prog_fd in dir.
Status chain_xdp(int ifindex, uint32_t hook, int prog_fd, int slot_fd,
                 const XdpNeighbour& neighbour, const std::string& dir);

// Replaces the pinned chained program with prog_fd (an adopting attach);
// the slot, a pinned map, keeps the neighbour.
Status rechain_xdp(int ifindex, int prog_fd, const std::string& dir);

// Gives the hook back to the program in the slot, or detaches edgeshed's
// if the slot is empty; returns what failed, as " what: why;" items.
std::string unchain_xdp(int ifindex, const std::string& dir);

// "id N (name)" of the program in the slot, or "none".
std::string xdp_slot_text(const std::string& dir);

}  // namespace edgeshed
