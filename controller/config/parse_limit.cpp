// [limit]: the adaptive limit algorithm and the keys each algorithm takes.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "config/parse_sections.h"

namespace edgeshed::config::sections {

using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::nanoseconds;
using std::chrono::seconds;

void parse_limit(TableReader& reader, law::LimitConfig& limit, std::string& latency_signal,
                 uint32_t& max_connections) {
  // Any algorithm: the operator's hard cap, which no law moves.
  reader.integer("max_connections", max_connections, 1, kMaxConnections);
  reader.choice("algorithm", limit.algorithm, names::kLimitAlgorithms);
  using enum law::LimitAlgorithmKind;
  constexpr auto kAll = names::all_values<law::LimitAlgorithmKind>();
  const std::vector<law::LimitAlgorithmKind> any(kAll.begin(), kAll.end());
  // Keys of another algorithm than the chosen one are errors: they would do nothing.
  const std::vector<std::pair<std::string_view, std::vector<law::LimitAlgorithmKind>>> keys = {
      {"initial", any},
      {"cold_start", {kCapacity}},
      {"latency_signal", any},
      {"min", {kAimd, kGradient, kCapacity}},
      {"max", {kAimd, kGradient, kCapacity}},
      {"probe_factor", {kCapacity}},
      {"probe_time", {kCapacity}},
      {"floor_ttl", {kCapacity}},
      {"queue_gate", {kCapacity}},
      {"latency_threshold", {kAimd}},
      {"increase", {kAimd}},
      {"backoff", {kAimd}},
      {"tolerance", {kGradient, kCapacity}},
      {"smoothing", {kGradient, kCapacity}},
      {"baseline_smoothing", {kGradient}},
      {"baseline_rise_after", {kGradient}},
      {"max_increase_per_tick", {kGradient, kCapacity}},
      {"max_decrease_per_tick", {kGradient, kCapacity}},
  };
  reader.string("latency_signal", latency_signal);
  bool valid = true;
  for (const auto& [key, algorithms] : keys) {
    reader.allow(key);
    if (std::find(algorithms.begin(), algorithms.end(), limit.algorithm) == algorithms.end() &&
        reader.source_table().contains(key)) {
      reader.invalid(key, "only valid with algorithm = " + names::quoted_names(algorithms, " or "));
      valid = false;
    }
  }
  if (!valid) {
    reader.reject_unknown_keys();
    return;
  }

  auto read_bounds = [&](uint32_t& initial, uint32_t& min, uint32_t& max) {
    reader.integer("initial", initial, 1, kMaxConnections);
    reader.integer("min", min, 1, kMaxConnections);
    reader.integer("max", max, 1, kMaxConnections);
    auto set = [&](std::string_view key) { return reader.source_table().contains(key); };
    if (min > max) {
      if (set("min")) {
        reader.invalid("min", "must be <= limit.max (" + std::to_string(max) + ")");
      } else {
        reader.invalid("max", "must be >= limit.min (" + std::to_string(min) + ")");
      }
    } else if (initial < min || initial > max) {
      const std::string range = "must be in [limit.min, limit.max] = [" + std::to_string(min) +
                                ", " + std::to_string(max) + "]";
      if (set("initial")) {
        reader.invalid("initial", range);
      } else {
        reader.invalid(initial < min ? "min" : "max",
                       std::string("must be ") + (initial < min ? "<= " : ">= ") +
                           "limit.initial (" + std::to_string(initial) + ")");
      }
    }
  };

  switch (limit.algorithm) {
    case law::LimitAlgorithmKind::kStatic:
      reader.integer("initial", limit.static_limit.limit, 1, kMaxConnections);
      break;
    case law::LimitAlgorithmKind::kAimd: {
      law::AimdLimitConfig& aimd = limit.aimd;
      read_bounds(aimd.initial, aimd.min, aimd.max);
      nanoseconds threshold = std::chrono::duration_cast<nanoseconds>(
          std::chrono::duration<double>(aimd.latency_threshold_seconds));
      if (reader.duration("latency_threshold", threshold, milliseconds(1), minutes(1))) {
        aimd.latency_threshold_seconds = std::chrono::duration<double>(threshold).count();
      }
      reader.integer("increase", aimd.increase, 1, 1000);
      reader.number("backoff", aimd.backoff, 0.0, 1.0, Bounds::kOpen);
      break;
    }
    case law::LimitAlgorithmKind::kGradient: {
      law::GradientLimitConfig& gradient = limit.gradient;
      read_bounds(gradient.initial, gradient.min, gradient.max);
      reader.number("tolerance", gradient.tolerance, 0.0, 1.0, Bounds::kOpenMin);
      reader.number("smoothing", gradient.smoothing, 0.0, 1.0, Bounds::kOpenMin);
      reader.number("baseline_smoothing", gradient.baseline_smoothing, 0.0, 1.0, Bounds::kOpenMin);
      reader.duration("baseline_rise_after", gradient.baseline_rise_after, nanoseconds(0),
                      minutes(10), /*zero_allowed=*/true);
      reader.number("max_increase_per_tick", gradient.max_increase_per_tick, 1.0, 10.0,
                    Bounds::kOpenMin);
      reader.number("max_decrease_per_tick", gradient.max_decrease_per_tick, 0.0, 1.0,
                    Bounds::kOpen);
      break;
    }
    case law::LimitAlgorithmKind::kCapacity: {
      law::CapacityLimitConfig& capacity = limit.capacity;
      reader.choice("cold_start", capacity.cold_start, names::kColdStarts);
      read_bounds(capacity.initial, capacity.min, capacity.max);
      reader.number("tolerance", capacity.tolerance, 0.0, 1.0, Bounds::kOpenMin);
      reader.number("smoothing", capacity.smoothing, 0.0, 1.0, Bounds::kOpenMin);
      reader.number("max_increase_per_tick", capacity.max_increase_per_tick, 1.0, 10.0,
                    Bounds::kOpenMin);
      reader.number("max_decrease_per_tick", capacity.max_decrease_per_tick, 0.0, 1.0,
                    Bounds::kOpen);
      reader.number("probe_factor", capacity.probe_factor, 0.0, 1.0, Bounds::kOpen);
      reader.duration("probe_time", capacity.probe_time, milliseconds(100), minutes(1));
      reader.duration("floor_ttl", capacity.floor_ttl, seconds(1), std::chrono::hours(24));
      reader.number("queue_gate", capacity.queue_gate, 0.0, 100.0, Bounds::kClosed);
      break;
    }
  }
  reader.reject_unknown_keys();
}

}  // namespace edgeshed::config::sections
