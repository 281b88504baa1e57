// What `status` and `top` show, read from the pinned maps of each attached
// interface and from the daemon's state file. Works without the daemon.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/daemon_health.h"
#include "common/result.h"
#include "edgeshed/abi.h"

namespace edgeshed {

// Interfaces with a data plane pinned under EDGESHED_PIN_ROOT.
// The wall clock, in ms since the epoch.
int64_t realtime_ms();

std::vector<std::string> attached_interfaces();

// The special members are nlohmann::json's, which bugprone-exception-escape
// sees throw (it cannot tell from where); nothing here throws.
// NOLINTNEXTLINE(bugprone-exception-escape)
struct InterfaceReading {
  nlohmann::ordered_json json;  // settings, policy, in-flight, counters
  edgeshed_stats stats{};
  uint64_t at_ns = 0;  // CLOCK_MONOTONIC of the counter read
};

Result<InterfaceReading> read_interface(const std::string& iface);
// A reading that only carries why the interface could not be read.
InterfaceReading unreadable_interface(const std::string& iface, const std::string& error);

// Adds "rates" (per second, per class, between two readings) to after.json;
// nothing when either reading is unreadable.
void add_rates(InterfaceReading& after, const InterfaceReading& before);

// One read of the run directory and /proc: the live daemon's state file (with
// "state_age_ms"; null when no live daemon vouches for it) and the diagnosis
// made from that same read, so the two cannot disagree.
struct DaemonReading {
  nlohmann::ordered_json state;
  nlohmann::ordered_json health;  // health_json of the diagnosis
};
DaemonReading read_daemon(const std::string& run_dir);
// {"state": "hung", "why": "..."}
nlohmann::ordered_json health_json(const DaemonHealth& health);

// The whole status, as `status --json` prints it. When the daemon is not
// deciding, each interface's fail-open reason (or fail-static note) says why.
nlohmann::ordered_json status_json(const nlohmann::ordered_json& daemon,
                                   const nlohmann::ordered_json& health,
                                   const std::vector<InterfaceReading>& interfaces);

// Human-readable lines of the same.
std::vector<std::string> status_lines(const nlohmann::ordered_json& status);

}  // namespace edgeshed
