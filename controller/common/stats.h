// Numbers derived from the data plane's counters (struct edgeshed_stats), each
// computed here only.
#pragma once

#include <cstdint>

#include "edgeshed/abi.h"

namespace edgeshed {

// One class's row of the per-class counters.
using ClassCounters = __u64[EDGESHED_NUM_COUNTERS];

// All connections of a class that were shed, whatever the reason (cap,
// fraction, rate): the SHED_* counters, which follow the reasons' order.
constexpr uint64_t class_sheds(const ClassCounters& counters) {
  uint64_t sum = 0;
  for (int reason = EDGESHED_REASON_CAP; reason <= EDGESHED_REASON_RATE; ++reason) {
    sum += counters[EDGESHED_CTR_SHED_CAP + reason - EDGESHED_REASON_CAP];
  }
  return sum;
}

// All connections of a class that observe mode would have shed.
constexpr uint64_t class_would_sheds(const ClassCounters& counters) {
  uint64_t sum = 0;
  for (int reason = EDGESHED_REASON_CAP; reason <= EDGESHED_REASON_RATE; ++reason) {
    sum += counters[EDGESHED_CTR_WOULD_SHED_CAP + reason - EDGESHED_REASON_CAP];
  }
  return sum;
}

}  // namespace edgeshed
