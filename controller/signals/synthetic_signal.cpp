#include "signals/synthetic_signal.h"

#include <limits>

#include "config/signal_table.h"
#include "config/toml_reader.h"

namespace edgeshed::signals {
namespace {

void parse_synthetic_keys(config::TableReader& reader) {
  constexpr double kInfinity = std::numeric_limits<double>::infinity();
  double value = 0.0;
  reader.number("value", value, -kInfinity, kInfinity, config::Bounds::kOpen);
}

MadeSource make_synthetic(const config::SignalConfig& cfg, const DataplaneReaders& /*readers*/) {
  return std::unique_ptr<SignalSource>(
      std::make_unique<ConstantSignal>(config::signal_keys(cfg)["value"].value_or(0.0)));
}

}  // namespace

const SignalKindDescriptor kSyntheticKind = {
    .meaning = "a fixed number (`value`, default 0), for tests and for holding a level by config",
    .parse_keys = parse_synthetic_keys,
    .check = checked_at_parse,
    .make = make_synthetic,
};

}  // namespace edgeshed::signals
