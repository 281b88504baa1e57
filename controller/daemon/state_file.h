// The daemon's view of the world, rewritten atomically each tick to a file
// under /run/edgeshed, so that `edgeshed status` can show signals, level
// and policy without talking to the daemon.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "law/control_law.h"
#include "signals/signal_set.h"

namespace edgeshed::daemon {

inline constexpr const char* kStateDir = "/run/edgeshed";
inline constexpr const char* kStateFile = "/run/edgeshed/state.json";

struct StateSnapshot {
  const law::Decision& decision;
  const std::vector<signals::SignalState>& signals;
  std::chrono::nanoseconds now;
  std::chrono::nanoseconds level_since;
  std::vector<std::string> interfaces;
  std::string config_path;
};

nlohmann::ordered_json to_json(const StateSnapshot& s);

// Writes to a temporary file and renames it over the path: readers never
// see half a file. The directory is created root-only.
Status write_state(const nlohmann::ordered_json& state, const std::string& path = kStateFile);

}  // namespace edgeshed::daemon
