// What the tick reads from and writes to the data planes of the attached
// interfaces, behind an interface so that the tick is tested on a fake.
// AttachedDataplane is the production adapter over each interface's Maps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/latency_window.h"
#include "common/result.h"
#include "dataplane/idle_connections.h"
#include "dataplane/maps.h"
#include "edgeshed/abi.h"
#include "signals/accept_queue_signal.h"

namespace edgeshed::daemon {

class DataplaneAccess {
 public:
  virtual ~DataplaneAccess() = default;

  // Interfaces are numbered 0..interface_count()-1, in the config's order.
  virtual size_t interface_count() const = 0;
  virtual const std::string& interface_name(size_t i) const = 0;

  // The tracker's counts; takes the peaks, so once a tick.
  virtual Result<LiveCounts> take_live_counts(size_t i) const = 0;
  virtual Result<edgeshed_stats> read_stats(size_t i) const = 0;
  virtual Result<std::vector<PortLatency>> read_latency(size_t i) const = 0;
  virtual Result<edgeshed_config> read_config(size_t i) const = 0;
  virtual Status write_config(size_t i, const edgeshed_config& cfg) const = 0;
  virtual Status publish(size_t i, const edgeshed_policy_set& set, uint64_t heartbeat_ns,
                         uint32_t salt) const = 0;
  // The listeners' queues of the protected ports, merged over interfaces.
  virtual Result<signals::QueueSnapshot> read_accept_queues() = 0;
  // The idle connections of the ports that reclaim them, and the reclaim of
  // those chosen (dataplane/idle_connections.h).
  virtual Result<std::vector<IdleConnection>> idle_connections(size_t i) = 0;
  virtual Status reclaim(size_t i, const std::vector<uint64_t>& cookies) = 0;
};

}  // namespace edgeshed::daemon
