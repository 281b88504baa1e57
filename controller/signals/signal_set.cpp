#include "signals/signal_set.h"

#include "signals/file_signal.h"
#include "signals/inflight_signal.h"
#include "signals/psi_signal.h"

namespace edgeshed::signals {
namespace {

// [[signal]] kind = "psi": resource = "cpu"|"memory"|"io", line = "some"|"full"
// (default some), measure = "tick"|"avg10" (default tick), cgroup = a cgroup
// v2 directory (default: the whole host, /proc/pressure).
Result<std::unique_ptr<SignalSource>> make_psi(const config::SignalConfig& cfg) {
  for (const auto& [key, node] : cfg.params) {
    if (key != "resource" && key != "line" && key != "measure" && key != "cgroup") {
      return make_error(cfg.locate(key.str()) +
                        ": unknown key for kind psi (allowed: resource, line, measure, cgroup)");
    }
  }
  auto resource = cfg.params["resource"].value<std::string>();
  if (!resource || (*resource != "cpu" && *resource != "memory" && *resource != "io")) {
    return make_error(cfg.locate("resource") + ": must be \"cpu\", \"memory\" or \"io\"");
  }
  auto line = cfg.params["line"].value_or(std::string("some"));
  if (line != "some" && line != "full") {
    return make_error(cfg.locate("line") + ": must be \"some\" or \"full\"");
  }
  auto measure = cfg.params["measure"].value_or(std::string("tick"));
  if (measure != "tick" && measure != "avg10") {
    return make_error(cfg.locate("measure") + ": must be \"tick\" or \"avg10\"");
  }
  auto cgroup = cfg.params["cgroup"].value<std::string>();
  std::string path =
      cgroup ? *cgroup + "/" + *resource + ".pressure" : "/proc/pressure/" + *resource;
  return std::unique_ptr<SignalSource>(std::make_unique<PsiSignal>(
      path, line == "full" ? PsiSignal::Line::kFull : PsiSignal::Line::kSome,
      measure == "avg10" ? PsiSignal::Measure::kAvg10 : PsiSignal::Measure::kTick));
}

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
      return std::unique_ptr<SignalSource>(
          std::make_unique<InflightSignal>(readers.inflight_total));
    case config::SignalKind::kPsi:
      return make_psi(cfg);
    default:
      return make_error(
          cfg.locate("kind") + ": signal kind '" + std::string(config::to_string(cfg.kind)) +
          "' is not available in this build (available: inflight, psi, file, synthetic)");
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
    readings.push_back(
        {s.config.name, s.last_good.value, s.config.target, s.config.hard_safety, s.stale});
  }
  return readings;
}

}  // namespace edgeshed::signals
