// Adaptive in-flight limit: the cap a "cap" policy applies when it names no
// fixed number.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>

#include "common/names.h"

namespace edgeshed::law {

// What the limit algorithm learns from one tick.
struct LimitSample {
  // Latency of admitted work this tick (e.g. p90 or a probe), in seconds;
  // empty when nothing completed.
  std::optional<double> latency_seconds;
  // In flight now, counting the classes the limit capped in the last decision
  // (all classes when it capped none).
  uint32_t inflight = 0;
  // The most in flight at once since the last tick, same classes as
  // `inflight` (the data plane keeps a peak the daemon reads and resets each
  // tick): bursts between ticks are what a limit meets. 0: not measured, use
  // `inflight`.
  uint32_t peak_inflight = 0;
  uint64_t sheds = 0;  // new connections shed since the last tick, all classes
  std::chrono::nanoseconds now{0};
  // Responses completed since the last tick; empty when not measured. Only the
  // capacity limit uses it.
  std::optional<uint64_t> completions;
  // Time since the last tick (the tick interval); zero when not known.
  std::chrono::nanoseconds interval{0};
};

// What a limit learnt of a service while it did not queue: kept across
// restarts (daemon/learnt_state.h) so that a restart starts warm, and carried
// from observe mode into enforce by the law itself.
struct Knowledge {
  double floor_seconds = 0.0;  // the latency signal with no queue
  uint32_t inflight = 0;       // requests in service, typical at that latency
  double rate = 0.0;           // completions per second then
  uint32_t peak_inflight = 0;  // the most in service seen while healthy
  uint64_t readings = 0;       // ticks it was learnt from
  double tail_seconds = 0.0;   // 0 in a file from before it
  double low_seconds = 0.0;    // 0 in a file from before it

  bool operator==(const Knowledge&) const = default;
};

class LimitAlgorithm {
 public:
  virtual ~LimitAlgorithm() = default;
  // Learns from one tick and returns the new limit.
  virtual uint32_t update(const LimitSample& sample) = 0;
  virtual uint32_t limit() const = 0;
  // Whether the limit binds nowhere yet because no queue was seen (the
  // capacity limit's open start): operators see it beside the limit.
  virtual bool open() const { return false; }
  // What it learnt so far; empty while too little to trust.
  virtual std::optional<Knowledge> knowledge() const { return std::nullopt; }
  // Before the first update: knowledge from an earlier run of the same
  // service. Algorithms that learn nothing ignore it.
  virtual void warm_start(const Knowledge& /*knowledge*/) {}
};

enum class LimitAlgorithmKind { kStatic, kAimd, kGradient, kCapacity };
static_assert(static_cast<std::size_t>(LimitAlgorithmKind::kCapacity) + 1 ==
              names::kLimitAlgorithms.size());

struct StaticLimitConfig {
  uint32_t limit = 20;

  bool operator==(const StaticLimitConfig&) const = default;
};

struct AimdLimitConfig {
  uint32_t initial = 20;
  uint32_t min = 4;
  uint32_t max = 1000;
  double latency_threshold_seconds = 0.1;  // over it: congestion
  uint32_t increase = 1;                   // added per uncongested tick
  double backoff = 0.9;                    // multiplied on congestion

  bool operator==(const AimdLimitConfig&) const = default;
};

// See gradient_limit.h for the law and the reasons behind these defaults.
struct GradientLimitConfig {
  uint32_t initial = 20;
  uint32_t min = 4;
  uint32_t max = 1000;
  double tolerance = 0.15;
  double smoothing = 0.2;
  double baseline_smoothing = 0.01;
  std::chrono::nanoseconds baseline_rise_after = std::chrono::seconds(2);
  double max_increase_per_tick = 1.1;
  double max_decrease_per_tick = 0.8;

  bool operator==(const GradientLimitConfig&) const = default;
};

// How the capacity limit starts (capacity_limit.h, step 0): open, binding
// nowhere until the first evidence of a queue, so that a service it has not
// seen is never refused for being busy; or capped at `initial` from the first
// tick, for an operator who knows the service's usual requests in service.
enum class ColdStart { kOpen, kInitial };
static_assert(static_cast<std::size_t>(ColdStart::kInitial) + 1 == names::kColdStarts.size());

// See capacity_limit.h for the law and the reasons behind these defaults.
struct CapacityLimitConfig {
  ColdStart cold_start = ColdStart::kOpen;
  uint32_t initial = 20;
  uint32_t min = 4;
  uint32_t max = 1000;
  double tolerance = 0.1;
  double smoothing = 0.2;
  double max_increase_per_tick = 1.1;
  double max_decrease_per_tick = 0.8;
  double probe_factor = 0.75;
  std::chrono::nanoseconds probe_time = std::chrono::seconds(1);
  std::chrono::nanoseconds floor_ttl = std::chrono::seconds(60);
  std::chrono::nanoseconds stale_after = std::chrono::seconds(1);

  bool operator==(const CapacityLimitConfig&) const = default;
};

struct LimitConfig {
  // Finds the capacity from the kernel-measured response time: the one that
  // protects a service whose capacity nobody told edgeshed.
  LimitAlgorithmKind algorithm = LimitAlgorithmKind::kCapacity;
  StaticLimitConfig static_limit;
  AimdLimitConfig aimd;
  GradientLimitConfig gradient;
  CapacityLimitConfig capacity;

  bool operator==(const LimitConfig&) const = default;
};

std::unique_ptr<LimitAlgorithm> make_limit_algorithm(const LimitConfig& config);

}  // namespace edgeshed::law

namespace edgeshed::names {
template <>
struct TableOf<law::LimitAlgorithmKind> {
  static constexpr const auto& kNames = kLimitAlgorithms;
  static constexpr std::string_view kWhat = "limit algorithm";
};
template <>
struct TableOf<law::ColdStart> {
  static constexpr const auto& kNames = kColdStarts;
  static constexpr std::string_view kWhat = "cold start";
};
}  // namespace edgeshed::names
