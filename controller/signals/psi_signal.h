// Pressure stall information (/proc/pressure/<resource>, or a cgroup v2
// directory's <resource>.pressure): the share of time tasks stalled on CPU,
// memory or IO. The default value is the stall share over the last tick,
// from the delta of the `total` counter, which reacts within one tick where
// avg10 needs seconds.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "signals/parse/psi.h"
#include "signals/proc_file.h"
#include "signals/signal_kind.h"
#include "signals/signal_source.h"

namespace edgeshed::signals {

class PsiSignal final : public SignalSource {
 public:
  enum class Line { kSome, kFull };
  enum class Measure { kTick, kAvg10 };

  PsiSignal(std::string path, Line line, Measure measure)
      : file_(std::move(path)), line_(line), measure_(measure) {}
  Result<Sample> sample(std::chrono::nanoseconds now) override;

  // The percentage (0..100) for a new reading, given the previous one.
  static double stall_percent(uint64_t total_us, uint64_t prev_total_us,
                              std::chrono::nanoseconds elapsed);

 private:
  ProcFile file_;
  Line line_;
  Measure measure_;
  std::optional<uint64_t> prev_total_us_;
  std::chrono::nanoseconds prev_at_{0};
};

// [[signal]] kind = "psi": its keys are read in psi_signal.cpp.
extern const SignalKindDescriptor kPsiKind;

}  // namespace edgeshed::signals
