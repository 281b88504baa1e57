#include "signals/kernel_latency_signal.h"

#include <algorithm>

namespace edgeshed::signals {

std::optional<double> LatencyStats::get(LatencyStatistic statistic) const {
  switch (statistic) {
    case LatencyStatistic::kP50:
      return p50;
    case LatencyStatistic::kP90:
      return p90;
    case LatencyStatistic::kP99:
      return p99;
    case LatencyStatistic::kMean:
      return mean;
  }
  return std::nullopt;
}

double KernelLatencySignal::value_of(const LatencySnapshot& snapshot, LatencyMeasure measure,
                                     LatencyStatistic statistic, std::optional<uint16_t> port) {
  auto value = [&](const PortLatency& p) { return p.get(measure).get(statistic).value_or(0.0); };
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
