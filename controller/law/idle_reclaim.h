// Which idle keep-alive connections to reclaim, and when (keepalive =
// "reclaim" or "refuse"): while a class holds more connections than its cap
// of requests in service, each of them may bring a request past the SYN's
// decision. nginx reclaims idle keep-alive connections when it runs short,
// longest idle first, at most 32 at a time; so does this, once a batch is
// due (an interval with jitter, so that the clients' reconnects do not
// come in waves), only from the level elevated on, and only as many as the
// class holds over its cap. Background gives up its connections first,
// critical last. Pure logic: the daemon's tick lists the idle connections
// and runs the reclaim (dataplane/idle_connections.h).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

#include "law/types.h"

namespace edgeshed::law {

struct IdleReclaimConfig {
  // A connection idle for less may be a closed-loop client between its
  // answer and its next request, or a server push between two writes.
  std::chrono::nanoseconds min_idle = std::chrono::seconds(1);
  std::chrono::nanoseconds interval = std::chrono::seconds(1);  // between batches
  double jitter = 0.2;  // the interval varies by this share either way
  uint32_t batch = EDGESHED_RECLAIM_BATCH;
};

// A class's connections on the ports that reclaim, and its cap of requests
// in service (kUnlimited: the limit binds nowhere, nothing is reclaimed).
struct ClassConnections {
  uint32_t connections = 0;
  uint32_t cap = 0;
};

struct IdleCandidate {
  uint64_t cookie = 0;
  std::chrono::nanoseconds idle{0};
  TrafficClass traffic_class = TrafficClass::kNormal;
};

using ClassQuota = std::array<uint32_t, kNumClasses>;

class IdleReclaim {
 public:
  // uniform: draws in [0, 1) for the jitter.
  IdleReclaim(IdleReclaimConfig config, std::function<double()> uniform);

  // How many connections of each class to reclaim now: none before the
  // next batch is due or below the level elevated; else each class's excess
  // over its cap, given out in shed order (background first) up to a batch.
  ClassQuota due(std::chrono::nanoseconds now, Level level,
                 const std::array<ClassConnections, kNumClasses>& classes) const;
  // The longest idle of candidates, per class up to its quota, each idle for
  // min_idle at least.
  std::vector<uint64_t> choose(std::vector<IdleCandidate> candidates,
                               const ClassQuota& quota) const;
  // A batch ran at now (whatever it found): the next is due an interval
  // with jitter later.
  void ran(std::chrono::nanoseconds now);

 private:
  IdleReclaimConfig config_;
  std::function<double()> uniform_;
  std::chrono::nanoseconds next_{0};
};

}  // namespace edgeshed::law
