#include "signals/signal_set.h"

#include "signals/file_signal.h"
#include "signals/inflight_signal.h"

namespace edgeshed::signals {
namespace {

Result<std::unique_ptr<SignalSource>> make_source(const config::SignalConfig& cfg,
                                                  const SignalSet::DataplaneReaders& readers) {
  switch (cfg.kind) {
    case config::SignalKind::kFile:
      return std::unique_ptr<SignalSource>(
          std::make_unique<FileSignal>(cfg.params["path"].value_or(std::string())));
    case config::SignalKind::kSynthetic:
      return std::unique_ptr<SignalSource>(
          std::make_unique<ConstantSignal>(cfg.params["value"].value_or(0.0)));
    case config::SignalKind::kInflight:
      return std::unique_ptr<SignalSource>(std::make_unique<InflightSignal>(readers.inflight_total));
    default:
      return make_error(cfg.locate("kind") + ": signal kind '" +
                        std::string(config::to_string(cfg.kind)) +
                        "' is not available in this build (available: inflight, file, synthetic)");
  }
}

}  // namespace

Result<SignalSet> SignalSet::build(const std::vector<config::SignalConfig>& configs,
                                   const DataplaneReaders& readers) {
  SignalSet set;
  for (const auto& cfg : configs) {
    auto source = make_source(cfg, readers);
    if (!source) return source.error();
    SignalState state;
    state.config = cfg;
    state.source = std::move(*source);
    set.states_.push_back(std::move(state));
  }
  return set;
}

std::vector<law::SignalReading> SignalSet::sample(std::chrono::nanoseconds now) {
  std::vector<law::SignalReading> readings;
  readings.reserve(states_.size());
  for (auto& s : states_) {
    auto sample = s.source->sample(now);
    if (sample) {
      s.last_good = *sample;
      s.has_sample = true;
      s.last_error.clear();
    } else {
      s.last_error = sample.error().message;
    }
    s.stale = !s.has_sample || now - s.last_good.taken > s.config.stale_after;
    readings.push_back({s.config.name, s.last_good.value, s.config.target, s.config.hard_safety,
                        s.stale});
  }
  return readings;
}

}  // namespace edgeshed::signals
