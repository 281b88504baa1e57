// How full the adaptive limit is: in-flight connections of the classes it
// caps over the limit. At 1 the limit binds and new connections are shed, so
// the level says that the host is shedding, and background traffic goes
// first. Needs nothing from the service either.
//
// The value stops at kCeiling, so that with target 1 it reaches high but not
// critical. Critical sheds every normal connection, which a full limit does
// anyway; entered from here it would go on shedding for the exit dwell after
// the limit has room again (the capacity dropped, the limit followed, the
// backlog drained).
#pragma once

#include <algorithm>
#include <functional>

#include "signals/signal_kind.h"
#include "signals/signal_source.h"

namespace edgeshed::signals {

struct LimitUse {
  double inflight = 0;  // of the most loaded class below critical
  double limit = 0;     // the adaptive limit of the last decision; 0: none yet
};

class LimitSignal final : public SignalSource {
 public:
  static constexpr double kCeiling = 1.5;

  explicit LimitSignal(std::function<Result<LimitUse>()> read) : read_(std::move(read)) {}

  Result<Sample> sample(std::chrono::nanoseconds now) override {
    auto use = read_();
    if (!use) return use.error();
    if (use->limit <= 0) return make_error("no adaptive limit decided yet");
    return Sample{std::min(use->inflight / use->limit, kCeiling), now};
  }

 private:
  std::function<Result<LimitUse>()> read_;
};

// [[signal]] kind = "limit".
extern const SignalKindDescriptor kLimitKind;

}  // namespace edgeshed::signals
