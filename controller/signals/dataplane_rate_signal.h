// New-connection rates from the data plane's own counters: SYNs seen,
// admitted, shed (or would-shed in observe mode), per second over the tick,
// for all classes or one.
#pragma once

#include <functional>
#include <optional>

#include "edgeshed/abi.h"
#include "signals/signal_kind.h"
#include "signals/signal_source.h"

namespace edgeshed::signals {

class DataplaneRateSignal final : public SignalSource {
 public:
  enum class Counter { kSyn, kAdmitted, kShed, kWouldShed };

  DataplaneRateSignal(std::function<Result<edgeshed_stats>()> read, Counter counter,
                      std::optional<uint32_t> class_id)
      : read_(std::move(read)), counter_(counter), class_id_(class_id) {}

  Result<Sample> sample(std::chrono::nanoseconds now) override;

  // The counter's total over the selected classes.
  static uint64_t total(const edgeshed_stats& stats, Counter counter,
                        std::optional<uint32_t> class_id);

 private:
  std::function<Result<edgeshed_stats>()> read_;
  Counter counter_;
  std::optional<uint32_t> class_id_;
  std::optional<uint64_t> prev_;
  std::chrono::nanoseconds prev_at_{0};
};

// [[signal]] kind = "dataplane": its keys are read in dataplane_rate_signal.cpp.
extern const SignalKindDescriptor kDataplaneRateKind;

}  // namespace edgeshed::signals
