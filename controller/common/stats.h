// Numbers derived from the data plane's counters (struct edgeshed_stats), each
// computed here only.
#pragma once

#include <cstdint>

#include "edgeshed/abi.h"

namespace edgeshed {

// One class's row of the per-class counters.
using ClassCounters = __u64[EDGESHED_NUM_COUNTERS];

// A protocol's row of a class (enum edgeshed_protocol, enum edgeshed_class).
constexpr const ClassCounters& class_row(const edgeshed_stats& stats, uint32_t protocol,
                                         uint32_t class_id) {
  return protocol == EDGESHED_PROTO_QUIC ? stats.quic_cls[class_id] : stats.cls[class_id];
}

// Adds the counters of `more` to `sum`.
constexpr void add_stats(edgeshed_stats& sum, const edgeshed_stats& more) {
  for (int c = 0; c < EDGESHED_NUM_CLASSES; ++c) {
    for (int k = 0; k < EDGESHED_NUM_COUNTERS; ++k) {
      sum.cls[c][k] += more.cls[c][k];
      sum.quic_cls[c][k] += more.quic_cls[c][k];
    }
  }
  for (int k = 0; k < EDGESHED_NUM_GLOBAL_COUNTERS; ++k) sum.global[k] += more.global[k];
}

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
