// Established connections on the protected ports, as the data plane's
// tracker counts them: the in-flight signal that needs nothing from the
// service.
#pragma once

#include <functional>

#include "signals/signal_kind.h"
#include "signals/signal_source.h"

namespace edgeshed::signals {

class InflightSignal final : public SignalSource {
 public:
  // read_total returns the current count; the daemon reads the maps.
  explicit InflightSignal(std::function<Result<double>()> read_total)
      : read_total_(std::move(read_total)) {}
  Result<Sample> sample(std::chrono::nanoseconds now) override {
    auto total = read_total_();
    if (!total) return total.error();
    return Sample{*total, now};
  }

 private:
  std::function<Result<double>()> read_total_;
};

// [[signal]] kind = "inflight".
extern const SignalKindDescriptor kInflightKind;

}  // namespace edgeshed::signals
