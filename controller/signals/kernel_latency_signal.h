// Latency of the protected ports as the kernel sees it, with no help from
// the service: the data plane's tracker times each request from its arrival
// to the server's first byte back (response time), and each connection from
// its establishment to the server's close (connection time). The daemon
// keeps the windowed quantiles (LatencyWindow); this class picks one.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>

#include "common/latency_window.h"
#include "signals/signal_kind.h"
#include "signals/signal_source.h"

namespace edgeshed::signals {

enum class LatencyStatistic { kP50, kP90, kP99, kMean };

double statistic_of(const LatencyStats& stats, LatencyStatistic statistic);

// Both measures of one port over the daemon's window; empty: no sample.
struct PortLatencyStats {
  std::optional<LatencyStats> response;
  std::optional<LatencyStats> connection;

  const std::optional<LatencyStats>& get(LatencyMeasure measure) const {
    return measure == LatencyMeasure::kResponse ? response : connection;
  }
};

// Keyed by local port; the entry kAllPorts holds all protected ports together.
using LatencySnapshot = std::map<uint16_t, PortLatencyStats>;
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

// [[signal]] kind = "kernel_latency": its keys are read in kernel_latency_signal.cpp.
extern const SignalKindDescriptor kKernelLatencyKind;

}  // namespace edgeshed::signals
