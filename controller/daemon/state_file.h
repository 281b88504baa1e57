// The daemon's view of the world, rewritten atomically each tick to a file
// under /run/edgeshed, so that `edgeshed status` can show signals, level
// and policy without talking to the daemon.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "law/control_law.h"
#include "signals/signal_set.h"

namespace edgeshed::daemon {

// Files of the run directory (config: daemon.run_dir).
inline constexpr const char* kDefaultRunDir = "/run/edgeshed";
inline constexpr const char* kStateFileName = "state.json";
inline constexpr const char* kLevelFileName = "level";
inline constexpr const char* kControlSocketName = "control.sock";
inline constexpr const char* kRuntimeFileName = "runtime.json";

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
};

nlohmann::ordered_json to_json(const StateSnapshot& s);

// Writes to a temporary file and renames it over the path: readers never
// see half a file.
Status write_file_atomically(const std::string& path, const std::string& content, mode_t mode);
// Removes path; one that is already absent counts as removed.
Status remove_file(const std::string& path);
Status write_state(const nlohmann::ordered_json& state, const std::string& path);
// Creates the run directory if needed.
Status make_run_dir(const std::string& dir);

}  // namespace edgeshed::daemon
