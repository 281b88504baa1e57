// A fixed value, for a configured baseline, for holding a level by config,
// or for a test.
#pragma once

#include "signals/signal_kind.h"
#include "signals/signal_source.h"

namespace edgeshed::signals {

class ConstantSignal final : public SignalSource {
 public:
  explicit ConstantSignal(double value) : value_(value) {}
  Result<Sample> sample(std::chrono::nanoseconds now) override { return Sample{value_, now}; }

 private:
  double value_;
};

// [[signal]] kind = "synthetic": value = a finite number (default 0),
// checked with the config file; no other key.
extern const SignalKindDescriptor kSyntheticKind;

}  // namespace edgeshed::signals
