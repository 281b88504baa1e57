// What `status` and `top` show, read from the pinned maps of each attached
// interface and from the daemon's state file. Works without the daemon.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "edgeshed/abi.h"

namespace edgeshed {

// Interfaces with a data plane pinned under EDGESHED_PIN_ROOT.
std::vector<std::string> attached_interfaces();

// The NOLINT: the special members are nlohmann::json's, which
// bugprone-exception-escape sees throw (it cannot tell from where).
struct InterfaceReading {  // NOLINT(bugprone-exception-escape)
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

// The running daemon's state file, with "running" and "state_age_ms"; null
// when no live daemon vouches for it.
nlohmann::ordered_json read_daemon_state(const std::string& run_dir);

// The whole status, as `status --json` prints it.
nlohmann::ordered_json status_json(const nlohmann::ordered_json& daemon,
                                   const std::vector<InterfaceReading>& interfaces);

// Human-readable lines of the same.
std::vector<std::string> status_lines(const nlohmann::ordered_json& status);

}  // namespace edgeshed
