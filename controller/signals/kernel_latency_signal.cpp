#include "signals/kernel_latency_signal.h"

#include <algorithm>

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

}  // namespace edgeshed::signals
