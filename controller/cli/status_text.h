// The phrases `status` prints in both its forms: the full one
// (status_lines.cpp, --verbose) and the one screen (status_summary.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/interface_status.h"
#include "ipc/state.h"

namespace edgeshed {

// "14:03:07", local time.
std::string clock_time(int64_t unix_ms);
// "crash_looping" -> "CRASH-LOOPING".
std::string upper(std::string s);
// "admit 70%, cap 11, 500/s".
std::string describe_policy(const ClassStatus& k);
// "mode enforce (until removed); level pinned critical (15 s left); ...".
std::string describe_changes(const ipc::ActiveChanges& rc);

// The status's interfaces; one whose JSON does not read carries the reason
// as its error.
std::vector<InterfaceStatus> interfaces_of(const nlohmann::ordered_json& status);

}  // namespace edgeshed
