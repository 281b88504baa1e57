#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>

#include "law/limit_algorithm.h"
#include "law/open_start.h"

namespace edgeshed::law {

// Capacity limit: finds by itself the in-flight cap at which the service is
// busy but does not queue, for a service that accepts at once and queues
// inside (so only the response time shows its queue).
//
// Inputs per tick: a response-time quantile over a short sliding window (p90
// over ~500 ms measured best in tests/unit/sim_service), the responses
// completed in the tick, in-flight, sheds, the tick interval.
//
//  0. Open start (cold_start = "open", the default): until the first
//     evidence of a queue the limit binds nowhere (it is max). A service the
//     law has never seen may carry any number of requests while healthy
//     (200 slots x 1 s at 0.9x: 180 in service), and refusing a healthy
//     service is the worst failure a shedder has. The evidence, against the
//     lowest latency of the last 2 s (or 5 of those latencies), on two ticks
//     in a row with in-flight not falling: the latency 1.5x over it; in-flight
//     1.5x over the in-flight then, plus Poisson noise; throughput not risen
//     with in-flight (a ramp-up completes more as it carries more); and
//     in-flight 3x what Little's law gives that throughput at that latency (a
//     burst of a load under capacity reached 2.4x in the simulator); and the
//     latency risen by a share of the wait Little's law gives the added
//     in-flight if it were queued. A steady load under capacity never shows
//     it; long polls and idle crowds raise in-flight, not the others'
//     latency. Shedding at max is evidence too. A slow service (under 40
//     responses a second) makes a reading once its rate window, stretched up
//     to 10 s, holds 20 responses, with their mean latency; its evidence
//     must then hold on every reading for one no-queue latency.
//     A warm start's knowledge is a strong prior where this run has no
//     floor of its own yet: five ticks in a row 2x over the learnt floor
//     and over its p99, completing at least the learnt rate with 2x what
//     Little's law keeps in service at that rate and floor (a keep-alive
//     pool that saturates the service from the restart, which grows no
//     queue to prove). The proof
//     then puts the knowledge on trial: the limit holds for one and a half
//     latencies and five floors, and the throughput under it must stay at
//     half the proof's, or the limit opens again without the knowledge
//     (another service, slower and busier: a second or so of refusals).
//     The limit then starts where Little's law puts the concurrency at
//     saturation, completions per second x that lowest latency, within
//     [initial, 4 x initial]: from a cold start into 1.6x, 21 for 10 x 20 ms
//     on the first try. With a floor learnt over minutes of healthy ticks
//     (knowledge(), this run's or a warm start's), at that floor times the
//     rate of the ticks that proved the queue, unbounded. The price: the
//     queue of the ~4 ticks before (the requests admitted then wait as
//     without edgeshed).
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
//  3. It lowers only while it binds, and over the band only when it binds on
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
  // No evidence of a queue yet: the limit does not bind (step 0).
  bool open() const override { return unproven_; }
  // While open: step 0's (open_start.h). Once proven: the probe-confirmed
  // floor and the limit at it (Little's law), or nothing until a probe
  // confirms it: ticks of an overload that started before the law look
  // healthy to step 0 and must not be kept.
  std::optional<Knowledge> knowledge() const override;
  void warm_start(const Knowledge& knowledge) override { open_start_.warm_start(knowledge); }
  // The queue gate's age: [limit] queue_gate x the response time's p99 while
  // healthy, once learnt (this run's healthy ticks, or a warm start a tick
  // agreed with); scaled up with the floor when a probe confirms that the
  // service got slower since. Empty while queue_gate is 0 (the default): a
  // gate short enough to act before the limit also sheds a busy service's
  // own bursts (examples/edgeshed.toml has the figures).
  std::optional<std::chrono::nanoseconds> queue_age() const override;

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
  // A warm start's knowledge on trial after the proof it made (see
  // capacity_limit.cpp): the limit holds while the throughput is measured.
  struct Trial {
    std::chrono::nanoseconds measure_from;  // the requests admitted before had time to leave
    std::chrono::nanoseconds until;
    double proof_rate;  // completions per second when the queue was proven
    uint64_t completions = 0;
    std::chrono::nanoseconds measured{0};
  };
  static constexpr std::size_t kRecentTicks = 128;

  // Keeps the tick's completions for recent_rate() and the trial.
  void remember_completions(const LimitSample& sample);
  void start_trial(const LimitSample& sample);
  void continue_trial(const LimitSample& sample);

  void start_probe(std::chrono::nanoseconds now, std::optional<double> before_rate,
                   double chain_limit, double chain_latency);
  void continue_probe(const LimitSample& sample, std::optional<double> latency, bool binding,
                      bool over_limit);
  void step(const LimitSample& sample, double latency, bool binding);
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
  std::optional<Trial> trial_;
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
  bool unproven_;
  // Step 0, while unproven.
  OpenStart open_start_;
  // When the queue was proven: the healthy p99 and the floor beside it.
  std::optional<double> proven_tail_;
  std::optional<double> proven_floor_;
};

}  // namespace edgeshed::law
