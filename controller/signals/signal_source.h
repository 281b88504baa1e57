// One source of a pressure signal. Sources are sampled once per tick by the
// daemon, which also decides staleness from the time of the last good sample.
#pragma once

#include <chrono>
#include <string>

#include "common/result.h"

namespace edgeshed::signals {

struct Sample {
  double value = 0.0;
  std::chrono::nanoseconds taken{0};  // on the daemon's monotonic clock
};

class SignalSource {
 public:
  virtual ~SignalSource() = default;
  // A fresh sample, or why there is none. Must return within a few
  // milliseconds: the tick loop waits for it.
  virtual Result<Sample> sample(std::chrono::nanoseconds now) = 0;
};

}  // namespace edgeshed::signals
