#include "signals/limit_signal.h"

#include "signals/dataplane_readers.h"
#include "signals/signal_params.h"

namespace edgeshed::signals {
namespace {

// [[signal]] kind = "limit": no keys of its own.
MadeSource make_limit(const config::SignalConfig& cfg, const DataplaneReaders& readers) {
  ParamReader p(cfg, {});
  if (auto s = p.finish(); !s) return s.error();
  return std::unique_ptr<SignalSource>(std::make_unique<LimitSignal>(readers.limit_use));
}

}  // namespace

const SignalKindDescriptor kLimitKind = {
    .meaning =
        "requests in service of the normal and background classes over the adaptive limit (1: the "
        "limit binds and sheds), at most 1.5; a config without `[[signal]]` gets this one alone",
    .check = check_by_making<make_limit>,
    .make = make_limit,
};

}  // namespace edgeshed::signals
