// The id a network namespace has in the calling thread's (RTM_GETNSID),
// given one first if it has none (RTM_NEWNSID with id -1: the kernel
// picks, as `ip netns set NAME auto` does; CNIs give most pods one anyway).
// BPF socket lookups take this id to find a container's sockets from the
// host's side of its traffic.
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"

namespace edgeshed {

// ns_file: an nsfs file of the namespace (/proc/PID/ns/net, /run/netns/NAME);
// an error, and no id given, when it opens another namespace than inode by
// now (a pid reused since it was resolved).
Result<int32_t> netns_id_of(const std::string& ns_file, uint32_t inode);

}  // namespace edgeshed
