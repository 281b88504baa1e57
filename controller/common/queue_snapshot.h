// The accept queues of the protected ports at one moment: what the data
// plane's reader (dataplane/accept_queue.h) returns and the accept-queue
// signal (signals/accept_queue_signal.h) turns into a value. Here, below
// both, so that neither includes the other.
#pragma once

#include <cstdint>
#include <map>

namespace edgeshed {

struct PortQueue {
  uint32_t depth = 0;      // connections in the listeners' accept queues
  uint32_t max_depth = 0;  // sum of the listeners' backlog limits
  uint32_t waiting = 0;    // of those, the ones the tracker timestamped
  uint64_t oldest_ns = 0;  // age of the oldest waiting connection
};

using QueueSnapshot = std::map<uint16_t, PortQueue>;

}  // namespace edgeshed
