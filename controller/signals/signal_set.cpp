#include "signals/signal_set.h"

#include "config/signal_table.h"
#include "signals/accept_queue_signal.h"
#include "signals/dataplane_rate_signal.h"
#include "signals/file_signal.h"
#include "signals/inflight_signal.h"
#include "signals/netstat_signal.h"
#include "signals/probe_signal.h"
#include "signals/prometheus_signal.h"
#include "signals/psi_signal.h"
#include "signals/signal_params.h"

namespace edgeshed::signals {
namespace {

// [[signal]] kind = "psi": resource = "cpu"|"memory"|"io", line = "some"|"full"
// (default some), measure = "tick"|"avg10" (default tick), cgroup = a cgroup
// v2 directory (default: the whole host, /proc/pressure).
Result<std::unique_ptr<SignalSource>> make_psi(const config::SignalConfig& cfg) {
  ParamReader p(cfg, "psi", {"resource", "line", "measure", "cgroup"});
  const auto resource = p.choice("resource", {"cpu", "memory", "io"}, "");
  const auto line = p.choice("line", {"some", "full"}, "some");
  const auto measure = p.choice("measure", {"tick", "avg10"}, "tick");
  const auto cgroup = p.string("cgroup");
  if (auto s = p.finish(); !s) return s.error();
  std::string path = cgroup ? *cgroup + "/" + resource + ".pressure" : "/proc/pressure/" + resource;
  return std::unique_ptr<SignalSource>(std::make_unique<PsiSignal>(
      path, line == "full" ? PsiSignal::Line::kFull : PsiSignal::Line::kSome,
      measure == "avg10" ? PsiSignal::Measure::kAvg10 : PsiSignal::Measure::kTick));
}

// The concrete factories return their own type, for tests and status.
template <class T>
Result<std::unique_ptr<SignalSource>> as_source(Result<std::unique_ptr<T>> made) {
  if (!made) return made.error();
  return std::unique_ptr<SignalSource>(std::move(*made));
}

// [[signal]] kind = "accept_queue": measure = "sojourn" (seconds the oldest
// waiting connection has waited; default) | "depth" | "fill" (depth/backlog),
// port = one protected port (default: the worst of them).
Result<std::unique_ptr<SignalSource>> make_accept_queue(
    const config::SignalConfig& cfg, const SignalSet::DataplaneReaders& readers) {
  ParamReader p(cfg, "accept_queue", {"measure", "port"});
  const auto measure = p.choice("measure", {"sojourn", "depth", "fill"}, "sojourn");
  AcceptQueueSignal::Measure m = measure == "depth"  ? AcceptQueueSignal::Measure::kDepth
                                 : measure == "fill" ? AcceptQueueSignal::Measure::kFill
                                                     : AcceptQueueSignal::Measure::kSojourn;
  std::optional<uint16_t> port;
  if (p.has("port")) port = static_cast<uint16_t>(p.integer("port", 0, 1, 65535));
  if (auto s = p.finish(); !s) return s.error();
  return std::unique_ptr<SignalSource>(
      std::make_unique<AcceptQueueSignal>(readers.accept_queue, m, port));
}

// [[signal]] kind = "dataplane": counter = "syn" (default) | "admitted" |
// "shed" | "would_shed", per second; class = one class (default: all).
Result<std::unique_ptr<SignalSource>> make_dataplane_rate(
    const config::SignalConfig& cfg, const SignalSet::DataplaneReaders& readers) {
  ParamReader p(cfg, "dataplane", {"counter", "class"});
  using Counter = DataplaneRateSignal::Counter;
  const auto counter = p.choice("counter", {"syn", "admitted", "shed", "would_shed"}, "syn");
  const Counter c = counter == "admitted"     ? Counter::kAdmitted
                    : counter == "shed"       ? Counter::kShed
                    : counter == "would_shed" ? Counter::kWouldShed
                                              : Counter::kSyn;
  std::optional<uint32_t> class_id;
  if (auto name = p.string("class")) {
    auto parsed = names::parse<law::TrafficClass>(*name);
    if (parsed) {
      class_id = static_cast<uint32_t>(*parsed);
    } else {
      p.invalid("class", parsed.error().message);
    }
  }
  if (auto s = p.finish(); !s) return s.error();
  return std::unique_ptr<SignalSource>(
      std::make_unique<DataplaneRateSignal>(readers.stats, c, class_id));
}

// [[signal]] kind = "kernel_latency": measure = "response" (default; from a
// request's arrival to the server's first byte back) | "connection" (from
// establishment to the server's close), statistic = "p99" (default) | "p90" |
// "p50" | "mean" over the daemon's latency window, port = one protected port
// (default: the worst of them). Seconds.
Result<std::unique_ptr<SignalSource>> make_kernel_latency(
    const config::SignalConfig& cfg, const SignalSet::DataplaneReaders& readers) {
  ParamReader p(cfg, "kernel_latency", {"measure", "statistic", "port"});
  const auto measure = p.choice("measure", {"response", "connection"}, "response");
  const auto statistic = p.choice("statistic", {"p50", "p90", "p99", "mean"}, "p99");
  std::optional<uint16_t> port;
  if (p.has("port")) port = static_cast<uint16_t>(p.integer("port", 0, 1, 65535));
  if (auto s = p.finish(); !s) return s.error();
  const LatencyStatistic stat = statistic == "p50"   ? LatencyStatistic::kP50
                                : statistic == "p90" ? LatencyStatistic::kP90
                                : statistic == "mean" ? LatencyStatistic::kMean
                                                      : LatencyStatistic::kP99;
  return std::unique_ptr<SignalSource>(std::make_unique<KernelLatencySignal>(
      readers.latency,
      measure == "connection" ? LatencyMeasure::kConnection : LatencyMeasure::kResponse, stat,
      port));
}

Result<std::unique_ptr<SignalSource>> make_source(const config::SignalConfig& cfg,
                                                  const SignalSet::DataplaneReaders& readers) {
  switch (cfg.kind) {
    case config::SignalKind::kFile:
      return std::unique_ptr<SignalSource>(
          std::make_unique<FileSignal>(config::signal_keys(cfg)["path"].value_or(std::string())));
    case config::SignalKind::kSynthetic:
      return std::unique_ptr<SignalSource>(
          std::make_unique<ConstantSignal>(config::signal_keys(cfg)["value"].value_or(0.0)));
    case config::SignalKind::kInflight:
      return std::unique_ptr<SignalSource>(
          std::make_unique<InflightSignal>(readers.inflight_total));
    case config::SignalKind::kPsi:
      return make_psi(cfg);
    case config::SignalKind::kPrometheus:
      return as_source(make_prometheus_signal(cfg));
    case config::SignalKind::kProbe:
      return as_source(make_probe_signal(cfg));
    case config::SignalKind::kNetstat:
      return as_source(make_netstat_signal(cfg));
    case config::SignalKind::kAcceptQueue:
      return make_accept_queue(cfg, readers);
    case config::SignalKind::kDataplane:
      return make_dataplane_rate(cfg, readers);
    case config::SignalKind::kKernelLatency:
      return make_kernel_latency(cfg, readers);
    case config::SignalKind::kLimit: {
      ParamReader p(cfg, "limit", {});
      if (auto s = p.finish(); !s) return s.error();
      return std::unique_ptr<SignalSource>(std::make_unique<LimitSignal>(readers.limit_use));
    }
  }
  return make_error(cfg.locate("kind") + ": unknown signal kind");
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
