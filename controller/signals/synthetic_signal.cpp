#include "signals/synthetic_signal.h"

#include <limits>

#include "signals/dataplane_readers.h"
#include "signals/signal_params.h"

namespace edgeshed::signals {
namespace {

// [[signal]] kind = "synthetic": value = the number (default 0), finite.
MadeSource make_synthetic(const config::SignalConfig& cfg, const DataplaneReaders& /*readers*/) {
  ParamReader p(cfg, {"value"});
  constexpr double kInfinity = std::numeric_limits<double>::infinity();
  const auto value = p.number("value", -kInfinity, kInfinity);
  if (auto s = p.finish(); !s) return s.error();
  return std::unique_ptr<SignalSource>(std::make_unique<ConstantSignal>(value.value_or(0.0)));
}

}  // namespace

const SignalKindDescriptor kSyntheticKind = {
    .meaning = "a fixed number (`value`, default 0), for tests and for holding a level by config",
    .check = check_by_making<make_synthetic>,
    .make = make_synthetic,
};

}  // namespace edgeshed::signals
