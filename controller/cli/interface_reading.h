// Reading the data plane pinned in bpffs: which interfaces have one, and
// each one's settings, policy, in-flight counts and counters. Works without
// the daemon.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli/interface_status.h"
#include "common/result.h"
#include "edgeshed/abi.h"

namespace edgeshed {

// Interfaces with a data plane pinned under EDGESHED_PIN_ROOT.
std::vector<std::string> attached_interfaces();

struct InterfaceReading {
  InterfaceStatus status;
  edgeshed_stats stats{};  // raw, for rates between two readings
  uint64_t at_ns = 0;      // CLOCK_MONOTONIC of the counter read
};

Result<InterfaceReading> read_interface(const std::string& iface);
// A reading that only carries why the interface could not be read.
InterfaceReading unreadable_interface(const std::string& iface, const std::string& error);

}  // namespace edgeshed
