// Step 0 of the capacity limit (capacity_limit.h): while the limit is open,
// whether the kernel's figures prove a queue, where the limit starts once they
// do, and what the service is like while healthy (its knowledge).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <utility>

#include "law/limit_algorithm.h"

namespace edgeshed::law {

class OpenStart {
 public:
  explicit OpenStart(const CapacityLimitConfig& config) : config_(config) {}

  // One tick while open: the limit's start (within [min, max]) when this
  // tick proves a queue; empty while it does not.
  std::optional<double> prove(const LimitSample& sample);

  // The healthy ticks of the last 5 minutes: a low quantile of their
  // latencies, the median of their in-flight and rate. Before enough of
  // them, a warm start's knowledge once a tick agreed with it.
  std::optional<Knowledge> knowledge() const;
  // Once a tick of this run agrees with the learnt floor (the same service),
  // the next ticks are compared with that floor too, for as long as a tick
  // is remembered, and the limit then starts at Little's law unclamped.
  // Knowledge no tick agrees with is ignored, and not kept.
  void warm_start(const Knowledge& knowledge);
  // The most in service seen while healthy, a warm start's included.
  uint32_t healthy_peak() const;
  // The response time's p99 while healthy: the median of this run's healthy
  // ticks', from the third on, else a placed warm start's.
  std::optional<double> tail() const;
  // The floor the limit starts from on proof: a warm start's that a tick
  // agreed with, or this run's healthy ticks, once there are a few.
  std::optional<double> start_floor() const;
  // Ticks learnt from, a warm start's included.
  uint64_t readings() const;
  // The proof took a warm start's knowledge on trial: no tick agreed with
  // its floor, but the ticks were far over it (a strong prior).
  bool warm_start_on_trial() const { return on_trial_; }
  // The trial failed: the knowledge is dropped for this run, and step 0
  // starts over from this run's ticks.
  void refute_warm_start();

 private:
  // One tick's latency and in-flight.
  struct Reading {
    std::chrono::nanoseconds at;
    double latency;  // seconds
    uint32_t inflight;
    std::optional<double> rate;  // completions per second over the rate window
    bool learnt = false;         // a warm start's knowledge, not this run's tick
    std::optional<double> tail;  // the response time's p99, seconds
  };
  // The completions (and latency) of one tick of the rate window.
  struct TickCompletions {
    std::chrono::nanoseconds at;
    uint64_t count;
    std::optional<double> latency;
  };

  // Completions per second over the rate window, when enough to count.
  std::optional<double> rate(const LimitSample& sample);
  // Where the rate window stretched past its 500 ms (a slow service), the
  // completion-weighted mean of its ticks' latencies: one tick's quantile
  // of a few responses is noise.
  std::optional<double> stretched_latency(const LimitSample& sample) const;
  // Completions per second over the ticks that proved the queue.
  std::optional<double> saturated_rate() const;
  // The low quantile of the healthy ticks' latencies (learnt_ not empty).
  double learnt_floor() const;
  // Keeps a healthy tick for knowledge().
  void learn(const Reading& reading);

  CapacityLimitConfig config_;
  std::deque<Reading> readings_;  // the memory, oldest first
  int queue_ticks_ = 0;           // ticks in a row with evidence of a queue
  // Slow services: since when, and at what in-flight, every reading has
  // shown a queue.
  std::optional<std::pair<std::chrono::nanoseconds, uint32_t>> slow_evidence_;
  uint32_t last_inflight_ = 0;
  std::deque<Reading> learnt_;  // healthy ticks with a rate, oldest first
  uint64_t learnt_readings_ = 0;
  std::optional<Knowledge> warm_;            // from warm_start()
  bool warm_placed_ = false;                 // a tick agreed: among readings_ since then
  bool warm_refuted_ = false;                // a trial failed: not placed again
  bool on_trial_ = false;                    // placed by a strong prior, not a tick's agreement
  int prior_ticks_ = 0;                      // ticks in a row of that prior
  std::deque<TickCompletions> completions_;  // the rate window, oldest first
};

}  // namespace edgeshed::law
