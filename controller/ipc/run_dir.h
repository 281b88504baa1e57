// The daemon's run directory (config: daemon.run_dir): the files in it that
// the daemon writes and the CLI reads, and how they are written. The
// daemon's lock on it is daemon/run_dir_lock.h, which the CLI never takes.
#pragma once

#include <sys/types.h>

#include <string>

#include "common/result.h"

namespace edgeshed::ipc {

inline constexpr const char* kDefaultRunDir = "/run/edgeshed";
inline constexpr const char* kStateFileName = "state.json";
inline constexpr const char* kLevelFileName = "level";
inline constexpr const char* kControlSocketName = "control.sock";
inline constexpr const char* kRuntimeFileName = "runtime.json";

// Writes to a temporary file and renames it over the path: readers never
// see half a file.
Status write_file_atomically(const std::string& path, const std::string& content, mode_t mode);
// Removes path; one that is already absent counts as removed.
Status remove_file(const std::string& path);
// Creates the run directory if needed.
Status make_run_dir(const std::string& dir);

}  // namespace edgeshed::ipc
