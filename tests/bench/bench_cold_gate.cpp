// Why a cold start gets no queue gate (issue #49): the data plane's gate
// (abi.h: shed while 3/4 of the requests that entered service the age ago
// are still in service) armed from the first request at m x the service's
// own median service time, as if the median were known before any response
// came back. That is the best a cold start could know. For each m, on the
// simulated service (tests/unit/sim_service.h, the gate modelled exactly):
//  - harm: the requests the gate refuses of healthy services, cold, over
//    60 s x 4 seeds: fixed and exponential service at 0.9x, and four heavy
//    tails at 0.7x (short/long ms, long share);
//  - onset: seed 000's case (10 slots x 20 ms at 1.6x, 2.5 s from cold),
//    the admitted p99 and p50 as multiples of the service time, the
//    completed share of capacity, and the first refusal.
// No limit binds: the gate alone. Prints figures; asserts nothing.
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "unit/sim_service.h"

namespace {

using edgeshed::sim::latency_quantile;
using edgeshed::sim::Seconds;
using edgeshed::sim::ServiceTimes;
using edgeshed::sim::SimConfig;
using edgeshed::sim::SimService;
using edgeshed::sim::SimTick;

constexpr uint32_t kSlots = 10;
constexpr uint32_t kSeeds = 4;
constexpr double kHealthySeconds = 60.0;
constexpr double kOnsetSeconds = 2.5;
constexpr double kOnsetLoad = 1.6;
constexpr double kSeedServiceMs = 20.0;
constexpr Seconds kOnsetTick{0.001};

struct Shape {
  const char* name;
  ServiceTimes times;
  double short_ms;
  double long_share;  // kBimodal
  double long_ms;     // kBimodal
  double load;
  double median_ms;  // of the service time
};

SimConfig config_of(const Shape& s, uint32_t seed) {
  SimConfig c;
  c.workers = kSlots;
  c.service_time = Seconds(s.short_ms / 1000.0);
  c.distribution = s.times;
  c.long_share = s.long_share;
  c.long_time = Seconds(s.long_ms / 1000.0);
  c.load = s.load;
  c.seed = seed;
  return c;
}

uint32_t open_limit(const SimTick& /*tick*/) { return UINT32_MAX; }

uint64_t refused_of_healthy(const Shape& s, double m) {
  uint64_t refused = 0;
  for (uint32_t seed = 1; seed <= kSeeds; ++seed) {
    SimService svc(config_of(s, seed));
    svc.set_queue_age(Seconds(m * s.median_ms / 1000.0));
    svc.run(Seconds(kHealthySeconds), open_limit);
    refused += svc.gate_sheds();
  }
  return refused;
}

void print_onset(const Shape& s, double m) {
  SimConfig c = config_of(s, 1);
  c.tick = kOnsetTick;  // the first refusal to the millisecond
  SimService svc(c);
  svc.set_queue_age(Seconds(m * s.median_ms / 1000.0));
  svc.run(Seconds(kOnsetSeconds), open_limit);
  const auto& done = svc.completions();
  const double unit = s.short_ms / 1000.0;
  std::optional<double> first;
  for (const auto& t : svc.ticks()) {
    if (t.sheds > 0) {
      first = t.at;
      break;
    }
  }
  std::printf(" | %-5s p99 %5.2fx p50 %5.2fx done %3.0f%% first shed %s", s.name,
              latency_quantile(done, 0, kOnsetSeconds, 0.99) / unit,
              latency_quantile(done, 0, kOnsetSeconds, 0.5) / unit,
              100.0 * static_cast<double>(done.size()) / kOnsetSeconds / svc.capacity_per_second(),
              first ? (std::to_string(static_cast<int>(*first * 1000)) + " ms").c_str() : "-");
}

}  // namespace

int main() {
  const std::vector<Shape> healthy = {
      {"fixed 20 0.9x", ServiceTimes::kFixed, 20, 0, 0, 0.9, 20},
      {"exp 20 0.9x", ServiceTimes::kExponential, 20, 0, 0, 0.9, 13.9},
      {"5/100 10% 0.7x", ServiceTimes::kBimodal, 5, 0.10, 100, 0.7, 5},
      {"5/200 5% 0.7x", ServiceTimes::kBimodal, 5, 0.05, 200, 0.7, 5},
      {"2/50 20% 0.7x", ServiceTimes::kBimodal, 2, 0.20, 50, 0.7, 2},
      {"1/500 1% 0.7x", ServiceTimes::kBimodal, 1, 0.01, 500, 0.7, 1},
  };
  const std::vector<Shape> onset = {
      {"fixed", ServiceTimes::kFixed, kSeedServiceMs, 0, 0, kOnsetLoad, kSeedServiceMs},
      {"exp", ServiceTimes::kExponential, kSeedServiceMs, 0, 0, kOnsetLoad, 13.9},
  };
  std::printf("cold queue gate at m x the median service time, %u slots\n", kSlots);
  std::printf("refused of healthy services (%.0f s x %u seeds):\n", kHealthySeconds, kSeeds);
  std::printf("%4s", "m");
  for (const auto& s : healthy) std::printf(" %15s", s.name);
  std::printf("\n");
  for (double m : {2.0, 3.0, 4.0, 6.0, 8.0}) {
    std::printf("%4.0f", m);
    for (const auto& s : healthy)
      std::printf(" %15llu", static_cast<unsigned long long>(refused_of_healthy(s, m)));
    std::printf("\n");
  }
  std::printf("seed 000's case from cold (%u x %.0f ms at %.1fx, %.1f s):\n", kSlots,
              kSeedServiceMs, kOnsetLoad, kOnsetSeconds);
  for (double m : {2.0, 3.0, 4.0, 6.0, 8.0}) {
    std::printf("%4.0f", m);
    for (const auto& s : onset) print_onset(s, m);
    std::printf("\n");
  }
  return 0;
}
