// A closed loop for the capacity limit's scenarios: the simulated service
// (sim_service.h) under a CapacityLimit, and the figures the tests judge.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>

#include "law/capacity_limit.h"
#include "law/limit_algorithm.h"
#include "unit/sim_service.h"

namespace edgeshed::law::capacity_loop {

using sim::Seconds;
using sim::ServiceTimes;
using sim::SimConfig;
using sim::SimService;
using sim::SimTick;
using std::chrono::nanoseconds;

// A service's shape, the parameter of the tests that it is never harmed.
struct Shape {
  const char* name;
  uint32_t workers;
  double service_ms;
};
inline std::string shape_name(const ::testing::TestParamInfo<Shape>& info) {
  return info.param.name;
}

struct Figures {
  double p99_ratio;  // admitted p99 / unloaded p99
  double goodput;    // completions / capacity
  double mean_limit;
  uint64_t sheds;
};

// Runs a SimService under a CapacityLimit.
class Loop {
 public:
  explicit Loop(const SimConfig& config, const CapacityLimitConfig& law = {})
      : config_(config), service_(config), limit_(law) {
    service_.set_limit(limit_.limit());
  }

  void run(double seconds) {
    service_.run(Seconds(seconds), [this](const SimTick& tick) {
      LimitSample sample;
      sample.latency_seconds = tick.latency_seconds;
      sample.inflight = tick.inflight;
      sample.sheds = tick.sheds;
      sample.now = std::chrono::duration_cast<nanoseconds>(tick.now);
      sample.completions = tick.completions;
      sample.interval = std::chrono::duration_cast<nanoseconds>(tick.interval);
      sample.tail_latency_seconds = tick.tail_seconds;
      sample.queue_seen = tick.queued || tick.gate_sheds > 0;
      const bool unproven = limit_.open();
      const uint32_t next = limit_.update(sample);
      if (unproven && !limit_.open()) proven_at_ = tick.now.count();
      // The data plane's queue gate, at the age the law publishes.
      const auto age = limit_.queue_age();
      service_.set_queue_age(age ? std::optional<Seconds>(*age) : std::nullopt);
      return next;
    });
  }

  // Over ticks in (from, to] and requests that arrived in [from, to).
  Figures figures(double from, double to, const SimConfig& unloaded) const {
    Figures f{};
    uint64_t completions = 0;
    double limit_sum = 0;
    int ticks = 0;
    for (const sim::SimTickRecord& tick : service_.ticks()) {
      if (tick.at <= from || tick.at > to) continue;
      completions += tick.completions;
      f.sheds += tick.sheds;
      limit_sum += tick.limit;
      ++ticks;
    }
    const double capacity = SimService(unloaded).capacity_per_second();
    f.goodput = completions / (to - from) / capacity;
    f.mean_limit = ticks > 0 ? limit_sum / ticks : 0.0;
    f.p99_ratio = sim::latency_quantile(service_.completions(), from, to, 0.99) /
                  sim::unloaded_quantile(unloaded, 0.99);
    return f;
  }
  Figures figures(double from, double to) const { return figures(from, to, config_); }

  // Before run(): what an earlier run learnt.
  void warm_start(const Knowledge& knowledge) { limit_.warm_start(knowledge); }

  SimService& service() { return service_; }
  const CapacityLimit& limit() const { return limit_; }
  std::optional<double> proven_at() const { return proven_at_; }

 private:
  SimConfig config_;
  SimService service_;
  CapacityLimit limit_;
  std::optional<double> proven_at_;  // seconds: when step 0 ended
};

inline SimConfig service(uint32_t workers, double service_ms, ServiceTimes times, double load,
                         uint32_t seed = 1) {
  SimConfig config;
  config.workers = workers;
  config.service_time = Seconds(service_ms / 1000.0);
  config.distribution = times;
  config.load = load;
  config.seed = seed;
  config.window = Seconds(0.5);  // what the law wants: p90 over 500 ms
  config.quantile = 0.9;
  return config;
}

inline const char* times_name(ServiceTimes times) {
  switch (times) {
    case ServiceTimes::kFixed:
      return "fixed";
    case ServiceTimes::kExponential:
      return "exp";
    case ServiceTimes::kBimodal:
      return "bimodal";
  }
  return "?";
}

inline void record(const std::string& name, const Figures& f) {
  ::testing::Test::RecordProperty(name + "_p99_ratio", std::to_string(f.p99_ratio));
  ::testing::Test::RecordProperty(name + "_goodput", std::to_string(f.goodput));
  ::testing::Test::RecordProperty(name + "_mean_limit", std::to_string(f.mean_limit));
  std::printf("[ figures  ] %s: p99/unloaded %.3f goodput %.3f mean limit %.1f sheds %lu\n",
              name.c_str(), f.p99_ratio, f.goodput, f.mean_limit,
              static_cast<unsigned long>(f.sheds));
}

}  // namespace edgeshed::law::capacity_loop
