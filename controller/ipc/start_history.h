// The daemon's recent starts, kept in the run directory until a clean stop
// removes them: what is left says the daemon died, failed to start, or is
// crash-looping, which `edgeshed status` tells the operator.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"

namespace edgeshed::ipc {

inline constexpr const char* kStartHistoryFileName = "starts.json";
// Enough to see a crash loop; older starts say nothing more.
inline constexpr size_t kMaxStartsKept = 10;

struct StartRecord {
  int64_t unix_ms = 0;
  int pid = 0;
  std::string error;  // why this start failed; empty if it did not
};

// Oldest first. A missing file is an empty history.
Result<std::vector<StartRecord>> read_start_history(const std::string& run_dir);
// Appends this process's start (with its error, for a start that failed
// before it could record one), keeping the newest kMaxStartsKept.
Status record_start(const std::string& run_dir, const std::string& error = {});
// Marks this process's start as failed.
Status record_start_failure(const std::string& run_dir, const std::string& error);
// A clean stop: nothing to diagnose any more. Left in place, the history
// would count this stop as a death towards a crash loop.
Status forget_start_history(const std::string& run_dir);

}  // namespace edgeshed::ipc
