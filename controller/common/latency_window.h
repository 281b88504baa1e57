// Windowed latency quantiles from the data plane's cumulative histograms
// (abi.h: log-linear buckets, per port and measure). Pure: fed a snapshot
// and a timestamp each tick, no I/O.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <vector>

#include "edgeshed/abi.h"

namespace edgeshed {

enum class LatencyMeasure : uint32_t {
  kResponse = EDGESHED_LATENCY_RESPONSE,
  kConnection = EDGESHED_LATENCY_CONNECTION,
};
inline constexpr size_t kLatencyMeasures = EDGESHED_NUM_LATENCY_MEASURES;

using LatencyHistogram = edgeshed_latency_hist;

// Cumulative histograms of one port since its slot was assigned, summed
// over CPUs (Maps::read_latency).
struct PortLatency {
  uint16_t port = 0;
  uint8_t service = 0;  // whose, of the port's services (abi.h)
  std::array<LatencyHistogram, kLatencyMeasures> measures{};
};

// Adds h's counts to into's.
void add_histogram(LatencyHistogram& into, const LatencyHistogram& h);

// Value at quantile q (0..1) of a histogram in seconds, interpolated
// linearly within its bucket; nullopt when it holds no sample.
std::optional<double> latency_quantile_s(const LatencyHistogram& h, double q);

struct LatencyStats {
  uint64_t count = 0;            // samples completed in the window
  double rate_per_s = 0;         // count / the time the window covers
  uint64_t last_tick_count = 0;  // samples completed in the newest tick
  double mean_s = 0;
  double p50_s = 0;
  double p90_s = 0;
  double p99_s = 0;
};

class LatencyWindow {
 public:
  static constexpr std::chrono::nanoseconds kDefaultWindow = std::chrono::seconds(1);

  explicit LatencyWindow(std::chrono::nanoseconds window = kDefaultWindow);

  // Feeds one tick's cumulative histograms, read at now (a monotonic
  // clock). A port's first snapshot, and one whose counts went down (its
  // data plane was attached anew or its slot given to it afresh), only sets
  // the baseline for the next tick. Ports absent from the snapshot lose
  // their baseline; their samples already in the window stay until they
  // expire. A clock going backwards empties the window.
  void update(std::chrono::nanoseconds now, const std::vector<PortLatency>& cumulative);

  // The samples completed in the window; nullopt when there is none.
  std::optional<LatencyStats> stats(uint16_t port, LatencyMeasure measure) const;

  std::chrono::nanoseconds window() const { return window_; }

 private:
  using Deltas = std::map<uint16_t, std::array<LatencyHistogram, kLatencyMeasures>>;
  struct Tick {
    std::chrono::nanoseconds from;  // the update before: deltas cover (from, at]
    std::chrono::nanoseconds at;
    Deltas deltas;
  };

  void expire(std::chrono::nanoseconds now);

  std::chrono::nanoseconds window_;
  std::optional<std::chrono::nanoseconds> last_;
  Deltas baseline_;         // the last cumulative snapshot of each port
  std::deque<Tick> ticks_;  // oldest first
};

}  // namespace edgeshed
