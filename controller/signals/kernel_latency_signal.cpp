#include "signals/kernel_latency_signal.h"

#include <algorithm>

#include "signals/dataplane_readers.h"
#include "signals/signal_params.h"

namespace edgeshed::signals {

double statistic_of(const LatencyStats& stats, LatencyStatistic statistic) {
  switch (statistic) {
    case LatencyStatistic::kP50:
      return stats.p50_s;
    case LatencyStatistic::kP90:
      return stats.p90_s;
    case LatencyStatistic::kP99:
      return stats.p99_s;
    case LatencyStatistic::kMean:
      return stats.mean_s;
  }
  return 0.0;
}

double KernelLatencySignal::value_of(const LatencySnapshot& snapshot, LatencyMeasure measure,
                                     LatencyStatistic statistic, std::optional<uint16_t> port) {
  auto value = [&](const PortLatencyStats& p) {
    const auto& stats = p.get(measure);
    return stats ? statistic_of(*stats, statistic) : 0.0;
  };
  if (port) {
    auto it = snapshot.find(*port);
    return it == snapshot.end() ? 0.0 : value(it->second);
  }
  double worst = 0;
  for (const auto& [p, latency] : snapshot) {
    if (p != kAllPorts) worst = std::max(worst, value(latency));
  }
  return worst;
}

Result<Sample> KernelLatencySignal::sample(std::chrono::nanoseconds now) {
  auto snapshot = read_();
  if (!snapshot) return snapshot.error();
  return Sample{value_of(*snapshot, measure_, statistic_, port_), now};
}

namespace {

constexpr Choices<LatencyMeasure, 2> kMeasures = {{
    {"response", LatencyMeasure::kResponse},
    {"connection", LatencyMeasure::kConnection},
}};
constexpr Choices<LatencyStatistic, 4> kStatistics = {{
    {"p50", LatencyStatistic::kP50},
    {"p90", LatencyStatistic::kP90},
    {"p99", LatencyStatistic::kP99},
    {"mean", LatencyStatistic::kMean},
}};

// [[signal]] kind = "kernel_latency": measure = "response" (default; from a
// request's arrival to the server's first byte back) | "connection" (from
// establishment to the server's close), statistic = "p99" (default) | "p90" |
// "p50" | "mean" over the daemon's latency window, port = one protected port
// (default: the worst of them). Seconds.
MadeSource make_kernel_latency(const config::SignalConfig& cfg, const DataplaneReaders& readers) {
  ParamReader p(cfg, {"measure", "statistic", "port"});
  const auto measure = p.choice("measure", kMeasures, std::optional(LatencyMeasure::kResponse));
  const auto statistic = p.choice("statistic", kStatistics, std::optional(LatencyStatistic::kP99));
  std::optional<uint16_t> port;
  if (p.has("port")) port = static_cast<uint16_t>(p.integer("port", 0, 1, 65535));
  if (auto s = p.finish(); !s) return s.error();
  return std::unique_ptr<SignalSource>(
      std::make_unique<KernelLatencySignal>(readers.latency, measure, statistic, port));
}

}  // namespace

const SignalKindDescriptor kKernelLatencyKind = {
    .meaning =
        "response time (a request's arrival to the server's first byte back) or connection time, "
        "p50/p90/p99 or mean, measured by the data plane in the kernel with no help from the "
        "service (Linux 6.11 or later); a port's `latency_objective` adds one",
    .check = check_by_making<make_kernel_latency>,
    .make = make_kernel_latency,
};

}  // namespace edgeshed::signals
