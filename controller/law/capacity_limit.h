#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>

#include "law/limit_algorithm.h"

namespace edgeshed::law {

// Capacity limit: finds by itself the in-flight cap at which the service is
// busy but does not queue, for a service that accepts at once and queues
// inside (so only the response time shows its queue).
//
// Inputs per tick: a response-time quantile over a short sliding window (p90
// over ~500 ms measured best in tests/unit/sim_service), the responses
// completed in the tick, in-flight, sheds, the tick interval.
//
//  1. floor: the latency with no queue. Measured by a probe: the limit held at
//     probe_factor (0.75) x itself for probe_time (longer for a slow service)
//     while the limit binds; the probe's mean latency is the floor if the
//     throughput fell with the limit (below the knee: no queue at the probe's
//     level). If it held, there was still a queue: the measurement is an upper
//     bound, and the next probe goes a step lower. Probes run only while the
//     floor is unconfirmed (start, a floor that rose without overload), stale
//     (floor_ttl), or contradicted (latency far over the band for stale_after
//     although the limit fell by a probe's step: the service got slower).
//  2. limit: a gradient towards latency = floor x (1 + tolerance):
//       limit *= 1 - g + g * clamp(floor * (1 + tolerance) / latency, 0.5, 2)
//     with g = smoothing, less on a tick with few responses; rate-limited.
//     After a confirming probe the limit jumps to where Little's law puts that
//     latency (in-flight proportional to latency above the knee).
//  3. Never harm a healthy service: while the service is not congested, the
//     limit stays at least kHealthyHeadroom (2) x the healthy concurrency, the
//     most in flight at once (the data plane's per-tick peak) on a healthy
//     tick of the last kHealthyWindow (30 s), and rises to it at once, not at
//     max_increase_per_tick. A service carrying 70 or 140 requests at once
//     (100 slots x 200 ms, 200 x 1 s at 0.7x) was refused most of its
//     traffic by a limit that started at 20 and learnt nothing over it.
//     Healthy: no shed for stale_after (a tick right after the limit rose in
//     an overload sheds nothing yet), and this tick's latency within two
//     bands of the floor (or, while the floor is unconfirmed, of the lowest
//     latency seen: an unconfirmed floor may be an overload's latency), or
//     no response yet at all (a 1 s service answers nothing for a second;
//     its in-flight still climbs, so the last tick's rise is added). A
//     response vouches for the lowest peak over its own latency: a slow
//     service's queue shows in its latency one latency later. Congestion
//     (the limit binds, the latency over two bands) clears it and takes the
//     headroom back, down to what responses vouched for (or `initial`): the
//     gradient and probes below own the limit then, as in an overload the
//     law started in, whose first ticks shed and so teach nothing here.
//     Why 2x and 30 s: the peak of a tick at these sizes stays well within
//     2x of the window's highest at 0.9x in the simulator, a window of 30 s
//     spans a long poll's cycle, and an overload the headroom admits doubles
//     the queue's latency, which is how it shows.
//  4. It lowers only while it binds, and over the band only when it binds on
//     kSustainedTicks ticks in a row or the latency is far over the band: a
//     limit met now and then by bursts of a load the service handles grows by
//     a quarter instead. Samples taken over the limit (a backlog it did not
//     admit) teach nothing.
//
// Why not the alternatives measured in the same simulator:
//  - Gradient2 (gradient_limit.h) with a floor learnt from the traffic takes a
//    congested latency as the floor when started in overload, and its
//    long-term baseline creeps up under sustained overload.
//  - A floor as the minimum of noisy windowed quantiles sinks with noise, and
//    the limit with it (it collapsed to min on exponential service times).
//  - Envoy-style re-measurement pins the limit to a tiny value; Vegas-style
//    limits stay low after an overload. Here a probe costs a quarter of the
//    limit for about a second, only when needed, and never goes under min.
//  - A throughput-only knee search (BBR-like) needs ~1000 responses to tell
//    95% from 98% of capacity: too slow at 500/s; throughput here only
//    confirms a probe.
//  - p50 as the signal: half the sensitivity to the queue of p90 on fixed
//    service times, and the goodput target needs 2-3 queued requests on
//    exponential ones, which p90 with tolerance 0.1 gives.
//
// Refused connections never produce samples; responses failed fast do (the
// kernel signal cannot tell them apart): the signal should exclude them if it
// can, or the floor will be too low and the limit too tight (not too loose).
class CapacityLimit final : public LimitAlgorithm {
 public:
  explicit CapacityLimit(const CapacityLimitConfig& config);

  uint32_t update(const LimitSample& sample) override;
  uint32_t limit() const override;

  // No-queue latency, seconds; empty until the first sample.
  std::optional<double> floor_seconds() const { return floor_; }
  bool floor_confirmed() const { return confirmed_at_.has_value(); }
  bool probing() const { return probe_.has_value(); }
  double estimate() const { return estimate_; }
  // Most in flight at once on a healthy tick of the window (see 3.); 0 when none.
  double healthy_concurrency() const {
    return healthy_peaks_.empty() ? 0.0 : healthy_peaks_.front().inflight;
  }

 private:
  struct Probe {
    std::chrono::nanoseconds started;
    std::chrono::nanoseconds drain;     // before measuring
    std::chrono::nanoseconds measure;   // then measuring
    std::optional<double> before_rate;  // completions per tick at the level above
    double chain_limit;                 // estimate before the first probe of this chain
    double chain_latency;               // latency then
    double latency_sum = 0.0;
    int latency_samples = 0;
    uint64_t completions = 0;
    int completion_ticks = 0;
    int binding_ticks = 0;
    int over_limit_ticks = 0;
    int ticks = 0;
  };
  static constexpr std::size_t kRecentTicks = 128;

  void start_probe(std::chrono::nanoseconds now, std::optional<double> before_rate,
                   double chain_limit, double chain_latency);
  void continue_probe(const LimitSample& sample, std::optional<double> latency, bool binding,
                      bool over_limit);
  void step(const LimitSample& sample, double latency, bool binding);
  void keep_healthy_room(const LimitSample& sample, bool measured, bool binding);
  struct Rate {
    std::optional<double> per_tick;
    uint64_t completions = 0;
    std::size_t ticks = 0;
  };
  Rate recent_rate(std::size_t ticks) const;

  CapacityLimitConfig config_;
  double estimate_;
  std::optional<double> floor_;
  std::optional<std::chrono::nanoseconds> confirmed_at_;
  std::optional<Probe> probe_;
  std::optional<double> smoothed_;  // latency, seconds
  std::optional<std::chrono::nanoseconds> below_band_since_;
  std::deque<uint64_t> recent_completions_;
  std::optional<std::chrono::nanoseconds> binding_since_;
  std::size_t binding_ticks_ = 0;
  std::optional<std::chrono::nanoseconds> unbound_since_;
  // Since when in-flight has been within the limit (the limit in force).
  std::optional<std::chrono::nanoseconds> in_force_since_;
  // Since when the latency has been over the band although the limit was in force.
  std::optional<std::chrono::nanoseconds> above_band_since_;
  double limit_above_band_ = 0.0;  // estimate when the latency went over the band
  bool calm_ = false;              // the limit had not bound for stale_after
  // Peaks of the healthy ticks in the last kHealthyWindow, each higher than
  // all later ones (so the front is the window's highest).
  struct Peak {
    std::chrono::nanoseconds at;
    double inflight;
  };
  std::deque<Peak> healthy_peaks_;
  std::deque<Peak> recent_peaks_;  // of every tick, the last kRecentTicks
  // Highest healthy concurrency vouched for by responses (not credited
  // before the first one).
  double proven_peak_ = 0.0;
  // Lowest latency measured while the floor is unconfirmed.
  std::optional<double> lowest_latency_;
  std::optional<std::chrono::nanoseconds> last_shed_;  // the last tick that shed
  uint32_t last_peak_ = 0;                             // peak in flight of the last tick
};

}  // namespace edgeshed::law
