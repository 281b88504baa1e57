// Where the daemon is when `status` finds no pins: still starting (README
// step 3 runs `status` right after `run &`), or in another mount namespace
// (`ip netns exec` gives it a /sys, and so a bpffs, of its own).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "common/result.h"

namespace edgeshed {

// The interfaces status acts on (target_interfaces()); when none is
// attached yet and a daemon is starting in this mount namespace, waits up
// to `wait` for it to attach, saying so on stderr. The error says why the
// pins are not there: a daemon elsewhere, or none, and the daemon's health.
Result<std::vector<std::string>> interfaces_for_status(const std::string& only,
                                                       const std::string& run_dir,
                                                       std::chrono::milliseconds wait);

}  // namespace edgeshed
