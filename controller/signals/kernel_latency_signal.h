// Latency of the protected ports as the kernel sees it, with no help from
// the service: the data plane's tracker times each request from its arrival
// to the server's first byte back (response time), and each connection from
// its establishment to the server's close (connection time). The daemon
// keeps the windowed quantiles; this class picks one of them.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>

#include "signals/signal_source.h"

namespace edgeshed::signals {

enum class LatencyMeasure { kResponse, kConnection };
enum class LatencyStatistic { kP50, kP90, kP99, kMean };

// One measure of one port over the daemon's latency window, in seconds.
struct LatencyStats {
  uint64_t count = 0;  // samples in the window
  std::optional<double> p50, p90, p99, mean;

  std::optional<double> get(LatencyStatistic statistic) const;
};

struct PortLatency {
  LatencyStats response;
  LatencyStats connection;

  const LatencyStats& get(LatencyMeasure measure) const {
    return measure == LatencyMeasure::kResponse ? response : connection;
  }
};

// Keyed by local port; the entry 0 holds all protected ports together.
using LatencySnapshot = std::map<uint16_t, PortLatency>;
inline constexpr uint16_t kAllPorts = 0;

class KernelLatencySignal final : public SignalSource {
 public:
  KernelLatencySignal(std::function<Result<LatencySnapshot>()> read, LatencyMeasure measure,
                      LatencyStatistic statistic, std::optional<uint16_t> port)
      : read_(std::move(read)), measure_(measure), statistic_(statistic), port_(port) {}

  // A window without samples reads 0: no request waited for an answer.
  Result<Sample> sample(std::chrono::nanoseconds now) override;

  // The configured port's value, or the worst of the protected ports.
  static double value_of(const LatencySnapshot& snapshot, LatencyMeasure measure,
                         LatencyStatistic statistic, std::optional<uint16_t> port);

 private:
  std::function<Result<LatencySnapshot>()> read_;
  LatencyMeasure measure_;
  LatencyStatistic statistic_;
  std::optional<uint16_t> port_;
};

}  // namespace edgeshed::signals
