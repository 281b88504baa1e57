#include "signals/signal_set.h"

#include "signals/signal_kinds.h"

namespace edgeshed::signals {

Result<SignalSet> SignalSet::build(const std::vector<config::SignalConfig>& configs,
                                   const DataplaneReaders& readers) {
  SignalSet set;
  for (const auto& cfg : configs) {
    const SignalKindDescriptor* kind = find_signal_kind(cfg.kind);
    if (kind == nullptr) return make_error(cfg.locate("kind") + ": unknown signal kind");
    auto source = kind->make(cfg, readers);
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
    readings.push_back(
        {s.config.name, s.last_good.value, s.config.target, s.config.hard_safety, s.stale});
  }
  return readings;
}

}  // namespace edgeshed::signals
