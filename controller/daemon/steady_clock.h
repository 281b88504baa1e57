// The real clock the daemon hands the control law. Outside law/, which reads
// time only through its Clock interface and so does no I/O of its own.
#pragma once

#include <chrono>
#include <ctime>

#include "law/clock.h"

namespace edgeshed::daemon {

// CLOCK_MONOTONIC, the clock bpf_ktime_get_ns() reads, so heartbeats written
// from it compare directly with the data plane's timestamps.
class SteadyClock final : public law::Clock {
 public:
  std::chrono::nanoseconds now() const override {
    timespec ts{};
    // Cannot fail for CLOCK_MONOTONIC with a valid pointer.
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
  }
};

}  // namespace edgeshed::daemon
