// Where the sources of the kinds fed by the data plane get their numbers:
// functions the daemon fills (daemon/tick.cpp, Tick::readers), so that no
// signal includes a dataplane/ header. A kind that needs a new number adds
// a member here and the daemon fills it.
#pragma once

#include <functional>

#include "common/result.h"
#include "edgeshed/abi.h"
#include "signals/accept_queue_signal.h"
#include "signals/kernel_latency_signal.h"
#include "signals/limit_signal.h"

namespace edgeshed::signals {

struct DataplaneReaders {
  std::function<Result<double>()> inflight_total;
  std::function<Result<QueueSnapshot>()> accept_queue;
  std::function<Result<edgeshed_stats>()> stats;  // summed over CPUs and interfaces
  std::function<Result<LatencySnapshot>()> latency;
  std::function<Result<LimitUse>()> limit_use;
};

}  // namespace edgeshed::signals
