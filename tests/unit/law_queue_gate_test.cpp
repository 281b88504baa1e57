// The queue gate in the simulator: the data plane sheds new connections while
// most requests that entered service a gate's age ago are still in service
// (sim_service.cpp models queue_age.bpf.h), the age being queue_gate x the
// p99 the capacity limit learnt while the service was healthy. Its onset
// against the limit alone, and the shapes the limit must never mistake for a
// queue.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "unit/capacity_loop.h"

namespace edgeshed::law {
namespace {

using namespace capacity_loop;

constexpr double kLearn = 10.0;  // seconds of half load before the overload
constexpr double kOverload = 4.0;

// The gate at 2x the healthy p99, as `[limit] queue_gate = 2.0` sets it.
CapacityLimitConfig with_gate() {
  CapacityLimitConfig config;
  config.queue_gate = 2.0;
  return config;
}

struct Onset {
  Figures figures;
  double first_shed;  // seconds after the overload began; -1: none
  uint64_t gate_sheds;
};

Onset overload_after_half_load(const SimConfig& config, const CapacityLimitConfig& law) {
  Loop loop(config, law);
  loop.service().set_load(0.5);
  loop.run(kLearn);
  loop.service().set_load(1.6);
  loop.run(kOverload);
  Onset onset{loop.figures(kLearn, kLearn + kOverload), -1.0, loop.service().gate_sheds()};
  for (const sim::SimTickRecord& tick : loop.service().ticks()) {
    if (tick.at > kLearn && tick.sheds > 0) {
      // The shed happened within the tick that reports it.
      onset.first_shed = tick.at - config.tick.count() - kLearn;
      break;
    }
  }
  return onset;
}

void print(const std::string& name, const Onset& o) {
  record(name, o.figures);
  std::printf("[ figures  ] %s: first shed within %.0f ms of the overload, %lu by the gate\n",
              name.c_str(), o.first_shed * 1000.0, static_cast<unsigned long>(o.gate_sheds));
}

// Seed 000's case after half load, and the same ten times slower: with the
// gate the queue is seen in the requests still waiting and the admitted p99
// is lower than the limit's alone, which waits for two ticks of proof.
TEST(QueueGateTest, AnOverloadAfterHalfLoad) {
  for (const double ms : {20.0, 200.0}) {
    const SimConfig config = service(10, ms, ServiceTimes::kFixed, 0.5);
    const Onset with = overload_after_half_load(config, with_gate());
    const Onset without = overload_after_half_load(config, {});
    const std::string name = std::to_string(static_cast<int>(ms)) + "ms";
    print(name + "_gate", with);
    print(name + "_limit_alone", without);
    EXPECT_GT(with.gate_sheds, 0u) << name;
    EXPECT_EQ(without.gate_sheds, 0u) << name << ": no gate by default";
    EXPECT_LT(with.figures.p99_ratio, without.figures.p99_ratio) << name;
    EXPECT_GT(with.figures.goodput, without.figures.goodput - 0.05) << name;
  }
}

// A warm start knows the tail before any tick of the run: the gate is armed
// once a tick agrees with the learnt floor (an overload restarted after half
// load: its first ticks already queue, and none agrees).
TEST(QueueGateTest, AWarmStartArmsTheGateOnceATickAgrees) {
  Loop learn(service(10, 20, ServiceTimes::kFixed, 0.5));
  learn.run(60.0);
  const std::optional<Knowledge> knowledge = learn.limit().knowledge();
  ASSERT_TRUE(knowledge.has_value());
  EXPECT_NEAR(knowledge->tail_seconds, 0.020, 0.010);

  Loop healthy(service(10, 20, ServiceTimes::kFixed, 0.5), with_gate());
  healthy.warm_start(*knowledge);
  healthy.run(0.3);
  ASSERT_TRUE(healthy.limit().queue_age().has_value());
  EXPECT_NEAR(std::chrono::duration<double>(*healthy.limit().queue_age()).count(),
              2.0 * knowledge->tail_seconds, 1e-9);
}

// Before the service was seen healthy there is no age to hold it to: from a
// cold start into an overload the gate stays open, and the limit proves the
// queue as before.
TEST(QueueGateTest, NoGateBeforeAHealthyTail) {
  Loop loop(service(10, 20, ServiceTimes::kFixed, 1.6), with_gate());
  loop.run(2.0);
  EXPECT_EQ(loop.service().gate_sheds(), 0u);
  EXPECT_FALSE(loop.limit().open()) << "proven by the limit alone";
}

struct Shape {
  const char* name;
  ServiceTimes times;
  double short_ms;
  double long_share;
  double long_ms;
  double load;
};
std::string shape_name(const ::testing::TestParamInfo<Shape>& info) { return info.param.name; }

SimConfig shape_service(const Shape& shape, double load, uint32_t seed) {
  SimConfig config = service(10, shape.short_ms, shape.times, load, seed);
  config.long_share = shape.long_share;
  config.long_time = Seconds(shape.long_ms / 1000.0);
  return config;
}

class NeverHarmTest : public ::testing::TestWithParam<Shape> {};

// A healthy heavy-tailed service is never shed over a minute at 0.7x: the
// limit learns its p99 while healthy and, where that is over 3x its floor,
// takes a p90 under 1.25x of it for no queue (its p90 wanders up to its long
// requests). Without that (ae8a0fc), 4 seeds of the 90% x 5 ms, 10% x 100 ms
// mix had 40,667 sheds, the 95% x 5 ms, 5% x 200 ms mix 10,224.
TEST_P(NeverHarmTest, AMinuteAtItsLoad) {
  const Shape& shape = GetParam();
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    Loop loop(shape_service(shape, shape.load, seed));
    loop.run(60.0);
    EXPECT_EQ(loop.figures(0.0, 60.0).sheds, 0u) << shape.name << " seed " << seed;
  }
}

// The same after a restart that knows the service from a minute at half
// load: its p90 wandering up to the long requests is no strong prior of a
// queue (open_start.cpp), so nothing is put on trial.
TEST_P(NeverHarmTest, AMinuteAtItsLoadAfterARestart) {
  const Shape& shape = GetParam();
  Loop learning(shape_service(shape, 0.5, /*seed=*/5));
  learning.run(60.0);
  const std::optional<Knowledge> knowledge = learning.limit().knowledge();
  ASSERT_TRUE(knowledge.has_value()) << shape.name;
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    Loop loop(shape_service(shape, shape.load, seed));
    loop.warm_start(*knowledge);
    loop.run(60.0);
    EXPECT_EQ(loop.figures(0.0, 60.0).sheds, 0u) << shape.name << " seed " << seed;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, NeverHarmTest,
    ::testing::Values(Shape{"heavy_90_5ms_10_100ms", ServiceTimes::kBimodal, 5, 0.1, 100, 0.7},
                      Shape{"heavy_95_5ms_5_200ms", ServiceTimes::kBimodal, 5, 0.05, 200, 0.7},
                      Shape{"heavy_80_2ms_20_50ms", ServiceTimes::kBimodal, 2, 0.2, 50, 0.7}),
    shape_name);

// A load that rises from 0.2x to 0.9x in one step: a queue's first ticks, to
// a window's rate that lags, but none (10 s after the step).
TEST(NeverHarmTest, AFastRiseUnderCapacity) {
  for (const ServiceTimes times : {ServiceTimes::kFixed, ServiceTimes::kExponential}) {
    for (uint32_t seed = 1; seed <= 4; ++seed) {
      Loop loop(service(10, 20, times, 0.2, seed));
      loop.run(10.0);
      loop.service().set_load(0.9);
      loop.run(10.0);
      EXPECT_EQ(loop.figures(10.0, 20.0).sheds, 0u) << times_name(times) << " seed " << seed;
    }
  }
}

}  // namespace
}  // namespace edgeshed::law
