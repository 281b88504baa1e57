// [limit]: the adaptive limit algorithm and the keys each algorithm takes.
#include <string>

#include "config/parse_sections.h"

namespace edgeshed::config::sections {

using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::nanoseconds;
using std::chrono::seconds;

namespace {

enum AlgorithmMask : unsigned {
  kStaticOnly = 1u << 0,
  kAimdOnly = 1u << 1,
  kGradientOnly = 1u << 2,
  kCapacityOnly = 1u << 3,
};

}  // namespace

void parse_limit(TableReader& reader, law::LimitConfig& limit, std::string& latency_signal,
                 uint32_t& max_connections) {
  // Any algorithm: the operator's hard cap, which no law moves.
  reader.integer("max_connections", max_connections, 1, kMaxConnections);
  reader.choice("algorithm", limit.algorithm, names::kLimitAlgorithms);
  const unsigned chosen = limit.algorithm == law::LimitAlgorithmKind::kStatic     ? kStaticOnly
                          : limit.algorithm == law::LimitAlgorithmKind::kAimd     ? kAimdOnly
                          : limit.algorithm == law::LimitAlgorithmKind::kCapacity ? kCapacityOnly
                                                                                  : kGradientOnly;
  // Keys of another algorithm than the chosen one are errors: they would do nothing.
  const std::initializer_list<std::pair<std::string_view, unsigned>> keys = {
      {"initial", kStaticOnly | kAimdOnly | kGradientOnly | kCapacityOnly},
      {"cold_start", kCapacityOnly},
      {"latency_signal", kStaticOnly | kAimdOnly | kGradientOnly | kCapacityOnly},
      {"min", kAimdOnly | kGradientOnly | kCapacityOnly},
      {"max", kAimdOnly | kGradientOnly | kCapacityOnly},
      {"probe_factor", kCapacityOnly},
      {"probe_time", kCapacityOnly},
      {"floor_ttl", kCapacityOnly},
      {"queue_gate", kCapacityOnly},
      {"latency_threshold", kAimdOnly},
      {"increase", kAimdOnly},
      {"backoff", kAimdOnly},
      {"tolerance", kGradientOnly | kCapacityOnly},
      {"smoothing", kGradientOnly | kCapacityOnly},
      {"baseline_smoothing", kGradientOnly},
      {"baseline_rise_after", kGradientOnly},
      {"max_increase_per_tick", kGradientOnly | kCapacityOnly},
      {"max_decrease_per_tick", kGradientOnly | kCapacityOnly},
  };
  reader.string("latency_signal", latency_signal);
  bool valid = true;
  for (const auto& [key, algorithms] : keys) {
    reader.allow(key);
    if ((algorithms & chosen) == 0 && reader.source_table().contains(key)) {
      std::string names;
      for (auto [bit, name] :
           {std::pair{kStaticOnly, "static"}, std::pair{kAimdOnly, "aimd"},
            std::pair{kGradientOnly, "gradient"}, std::pair{kCapacityOnly, "capacity"}}) {
        if ((algorithms & bit) == 0) continue;
        names += names.empty() ? "" : " or ";
        names += "\"" + std::string(name) + "\"";
      }
      reader.invalid(key, "only valid with algorithm = " + names);
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
