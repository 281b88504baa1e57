// Work done inside another network namespace (a container's): netlink
// sockets and BPF iterators act in the namespace of the thread that opens
// them, so the work runs on a thread of its own that joined it, and the
// daemon's threads stay where they are.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "common/result.h"

namespace edgeshed {

// Runs work on a new thread in the namespace that ns_file names (an nsfs
// file: /proc/PID/ns/net, /run/netns/NAME) and waits for it. An error, and
// no work, when the file opens another namespace than inode by now (a pid
// or a name reused since it was resolved).
Status run_in_netns(const std::string& ns_file, uint32_t inode,
                    const std::function<Status()>& work);

// The cookie of the calling thread's network namespace (SO_NETNS_COOKIE),
// which, unlike its inode, is never given to another namespace.
Result<uint64_t> current_netns_cookie();

}  // namespace edgeshed
