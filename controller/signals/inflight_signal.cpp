#include "signals/inflight_signal.h"

#include "signals/dataplane_readers.h"

namespace edgeshed::signals {
namespace {

// [[signal]] kind = "inflight": no keys of its own.
MadeSource make_inflight(const config::SignalConfig& /*cfg*/, const DataplaneReaders& readers) {
  return std::unique_ptr<SignalSource>(std::make_unique<InflightSignal>(readers.inflight_total));
}

}  // namespace

const SignalKindDescriptor kInflightKind = {
    .meaning = "requests in service on the protected ports, counted by the data plane",
    .check = check_by_making<make_inflight>,
    .make = make_inflight,
};

}  // namespace edgeshed::signals
