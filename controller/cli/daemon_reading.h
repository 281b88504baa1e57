// The daemon as the CLI sees it without talking to it: its state file in
// the run directory, its start history and its process.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/daemon_health.h"

namespace edgeshed {

// The wall clock, in ms since the epoch.
int64_t realtime_ms();

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

}  // namespace edgeshed
