// What `status` and `top` show: the daemon's reading and each attached
// interface's, put together as `status --json` prints it. Works without the
// daemon.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/daemon_reading.h"
#include "cli/interface_reading.h"

namespace edgeshed {

// The whole status. When the daemon is not deciding, each interface's
// fail-open reason (or fail-static note) says why.
nlohmann::ordered_json status_json(const nlohmann::ordered_json& daemon,
                                   const nlohmann::ordered_json& health,
                                   const std::vector<InterfaceReading>& interfaces);

// Human-readable lines of the same (status_lines.cpp).
std::vector<std::string> status_lines(const nlohmann::ordered_json& status);

}  // namespace edgeshed
