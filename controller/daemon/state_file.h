// The daemon's side of the state file (ipc/state.h): its view of the world,
// taken from the law's decision and the signals, in the file's schema.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "ipc/state.h"
#include "law/control_law.h"
#include "signals/signal_set.h"

namespace edgeshed::daemon {

struct StateSnapshot {
  const law::Decision& decision;
  const std::vector<signals::SignalState>& signals;
  std::chrono::nanoseconds now;
  std::chrono::nanoseconds level_since;
  std::vector<std::string> interfaces;
  std::string config_path;
  std::chrono::nanoseconds tick{0};  // how often the file is rewritten
  // Kernel-measured latency of the protected ports over the daemon's window.
  const signals::LatencySnapshot* latency = nullptr;
  ipc::ActiveChanges runtime_changes;  // the operator's
  std::optional<std::string> metrics;  // address:port of the metrics endpoint, if on
};

ipc::State make_state(const StateSnapshot& s);

}  // namespace edgeshed::daemon
