// The accept queues of the TCP listeners in this network namespace, from a
// sock_diag dump of listening sockets only: it walks the listening hash,
// not the established one, so it costs the same on a host with a million
// connections as on an idle one (what `ss -ltn` shows as Recv-Q/Send-Q).
#pragma once

#include <cstdint>
#include <vector>

#include "common/fd.h"
#include "common/result.h"

namespace edgeshed {

struct ListenQueue {
  uint16_t port = 0;       // local port
  uint32_t depth = 0;      // connections waiting to be accepted
  uint32_t max_depth = 0;  // the listen() backlog
};

// Dumps every tick through one netlink socket, opened at the first dump
// and closed after a failed one (its unread replies would confuse the next).
class ListenQueueDump {
 public:
  // IPv4 and IPv6 listeners.
  Result<std::vector<ListenQueue>> read();

 private:
  Fd fd_;
};

// One dump, through a socket of its own.
Result<std::vector<ListenQueue>> read_listen_queues();

}  // namespace edgeshed
