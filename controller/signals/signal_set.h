// The configured signals, sampled together once per tick into readings for
// the control law, each marked stale once its last good sample is too old.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "config/config.h"
#include "law/pressure.h"
#include "signals/dataplane_readers.h"
#include "signals/signal_source.h"

namespace edgeshed::signals {

// What a sampled signal looked like this tick, for logs and status.
struct SignalState {
  config::SignalConfig config;
  std::unique_ptr<SignalSource> source;
  Sample last_good;
  bool has_sample = false;
  bool stale = true;
  std::string last_error;  // empty after a good sample
};

class SignalSet {
 public:
  // Where sources that read the data plane get their numbers.
  using DataplaneReaders = signals::DataplaneReaders;

  // Each source made by its kind (signals/signal_kinds.cpp).
  static Result<SignalSet> build(const std::vector<config::SignalConfig>& configs,
                                 const DataplaneReaders& readers);

  // Samples every source. Errors leave the previous sample in place, so a
  // source that keeps failing goes stale after its stale_after.
  std::vector<law::SignalReading> sample(std::chrono::nanoseconds now);

  const std::vector<SignalState>& states() const { return states_; }

 private:
  std::vector<SignalState> states_;
};

}  // namespace edgeshed::signals
