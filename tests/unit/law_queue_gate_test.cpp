// The queue gate in the simulator: the data plane sheds new connections while
// most requests that entered service a gate's age ago are still in service
// (sim_service.cpp models queue_age.bpf.h), the age being 1.5x the p99 the
// capacity limit learnt while the service was healthy. Its onset against the
// limit alone, and the shapes it must never mistake for a queue.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "unit/capacity_loop.h"

namespace edgeshed::law {
namespace {

using namespace capacity_loop;

constexpr double kLearn = 10.0;  // seconds of half load before the overload
constexpr double kOverload = 4.0;

struct Onset {
  Figures figures;
  double first_shed;  // seconds after the overload began; -1: none
  uint64_t gate_sheds;
};

Onset overload_after_half_load(const SimConfig& config, bool gate, double factor = 1.6) {
  Loop loop(config);
  if (!gate) loop.without_gate();
  loop.service().set_load(0.5);
  loop.run(kLearn);
  loop.service().set_load(factor);
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

// Seed 000's case, warm: 10 slots x 20 ms at half load, then 1.6x. The gate
// sheds within the tick the overload starts in and holds the admitted p99
// far below the limit alone's, which waits for two ticks of proof.
TEST(QueueGateTest, AWarmOverloadIsCappedAtOnce) {
  const SimConfig config = service(10, 20, ServiceTimes::kFixed, 0.5);
  const Onset with = overload_after_half_load(config, true);
  const Onset without = overload_after_half_load(config, false);
  print("gate", with);
  print("limit_alone", without);
  EXPECT_GT(with.gate_sheds, 0u);
  ASSERT_GE(with.first_shed, 0.0);
  EXPECT_LE(with.first_shed, 0.1);  // the tick's resolution
  EXPECT_LT(with.figures.p99_ratio, 2.0);
  EXPECT_LT(with.figures.p99_ratio, without.figures.p99_ratio);
  EXPECT_GT(with.figures.goodput, 0.9);
}

// A 200 ms service: the same, ten times slower.
TEST(QueueGateTest, ASlowServiceIsCappedAtOnceToo) {
  SimConfig config = service(10, 200, ServiceTimes::kFixed, 0.5);
  const Onset with = overload_after_half_load(config, true);
  const Onset without = overload_after_half_load(config, false);
  print("slow_gate", with);
  print("slow_limit_alone", without);
  EXPECT_GT(with.gate_sheds, 0u);
  EXPECT_LT(with.figures.p99_ratio, without.figures.p99_ratio);
  EXPECT_LT(with.figures.p99_ratio, 2.0);
}

// The bench's warm start: what a minute at half load taught, then a restart
// the moment a 1.6x overload begins. The first responses of the new run did
// not queue and confirm the knowledge; the gate then holds the queue at once.
TEST(QueueGateTest, ARestartIntoAnOverloadStartsWarm) {
  for (const double ms : {20.0, 200.0}) {
    Loop learn(service(10, ms, ServiceTimes::kFixed, 0.5));
    learn.run(60.0);
    const std::optional<Knowledge> knowledge = learn.limit().knowledge();
    ASSERT_TRUE(knowledge.has_value());
    EXPECT_GT(knowledge->tail_seconds, 0.0);
    EXPECT_GT(knowledge->low_seconds, 0.0);

    Loop with(service(10, ms, ServiceTimes::kFixed, 1.6));
    with.warm_start(*knowledge);
    with.run(kOverload);
    Loop without(service(10, ms, ServiceTimes::kFixed, 1.6));
    without.warm_start(*knowledge);
    without.without_gate();
    without.run(kOverload);
    const std::string name = "restart_" + std::to_string(static_cast<int>(ms)) + "ms";
    const Figures f = with.figures(0.0, kOverload);
    record(name + "_gate", f);
    record(name + "_limit_alone", without.figures(0.0, kOverload));
    EXPECT_GT(with.service().gate_sheds(), 0u) << name;
    EXPECT_LT(f.p99_ratio, without.figures(0.0, kOverload).p99_ratio) << name;
  }
}

// Before the service was seen healthy there is no age to hold it to: from a
// cold start into an overload the gate stays open, and the limit proves the
// queue as before.
TEST(QueueGateTest, NoGateBeforeAHealthyTail) {
  Loop loop(service(10, 20, ServiceTimes::kFixed, 1.6));
  loop.run(0.5);
  EXPECT_EQ(loop.service().gate_sheds(), 0u);
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

class QueueGateNeverHarmTest : public ::testing::TestWithParam<Shape> {};

// A healthy service, heavy tail included, is never shed: from a cold start
// (the gate is armed once a second of healthy ticks taught the p99) for a
// minute, and from a rise from 0.2x to the load in one step.
TEST_P(QueueGateNeverHarmTest, NothingIsShed) {
  const Shape& shape = GetParam();
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    SimConfig config = service(10, shape.short_ms, shape.times, 0.2, seed);
    config.long_share = shape.long_share;
    config.long_time = Seconds(shape.long_ms / 1000.0);
    Loop loop(config);
    loop.run(10.0);
    loop.service().set_load(shape.load);
    loop.run(60.0);
    const Figures f = loop.figures(10.0, 70.0);
    EXPECT_EQ(f.sheds, 0u) << shape.name << " seed " << seed << ": "
                           << loop.service().gate_sheds() << " by the gate";
    EXPECT_TRUE(loop.limit().queue_age().has_value()) << "the gate was armed";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, QueueGateNeverHarmTest,
    ::testing::Values(Shape{"fixed_0_9", ServiceTimes::kFixed, 20, 0, 0, 0.9},
                      Shape{"exp_0_9", ServiceTimes::kExponential, 20, 0, 0, 0.9},
                      Shape{"heavy_90_5ms_10_100ms", ServiceTimes::kBimodal, 5, 0.1, 100, 0.7},
                      Shape{"heavy_95_5ms_5_200ms", ServiceTimes::kBimodal, 5, 0.05, 200, 0.7},
                      Shape{"heavy_80_2ms_20_50ms", ServiceTimes::kBimodal, 2, 0.2, 50, 0.7},
                      Shape{"heavy_99_1ms_1_500ms", ServiceTimes::kBimodal, 1, 0.01, 500, 0.7}),
    shape_name);

}  // namespace
}  // namespace edgeshed::law
