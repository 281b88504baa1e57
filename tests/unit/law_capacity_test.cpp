// The capacity limit: unit behaviour, then closed-loop scenarios against the
// simulated service in sim_service.h (accepts at once, queues inside).
//
// Targets (from the design brief): after settling, admitted p99 <= 1.25x the
// service's unloaded p99 and completions >= 95% of capacity; a halved
// capacity is back under 1.25x within 2 s; 0.7x load never sheds; 30 minutes
// of 1.6x overload drift the limit by <= 10%. Where a target is out of reach
// of any limit in this model the test says so and guards what is reached.
//
// Fixed service times are a hard case for the p99 target: with a queue that
// never empties, workers stay in phase, and one queued request waits up to a
// whole gap between completions. The best static caps in this simulator
// (60 s, 1.6x, C = 10, S = 20 ms), p99 ratio / goodput: C: 1.00 / 0.89,
// C+1: 1.26 / 0.95, C+2: 1.37 / 0.98. No cap meets both targets there.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "law/capacity_limit.h"
#include "law/limit_algorithm.h"
#include "unit/capacity_loop.h"
#include "unit/sim_service.h"

namespace edgeshed::law {
namespace {

using sim::Seconds;
using sim::ServiceTimes;
using sim::SimConfig;
using sim::SimService;
using sim::SimTick;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;

// --- unit behaviour

class Samples {
 public:
  LimitSample next(std::optional<double> latency, uint32_t inflight, uint64_t sheds,
                   uint64_t completions) {
    now_ += milliseconds(100);
    LimitSample sample;
    sample.latency_seconds = latency;
    sample.inflight = inflight;
    sample.sheds = sheds;
    sample.now = now_;
    sample.completions = completions;
    sample.interval = milliseconds(100);
    return sample;
  }

 private:
  nanoseconds now_{seconds(1)};
};

TEST(CapacityLimitTest, DefaultsAreDocumentedValues) {
  const CapacityLimitConfig defaults;
  EXPECT_EQ(defaults.initial, 20u);
  EXPECT_EQ(defaults.min, 4u);
  EXPECT_EQ(defaults.max, 1000u);
  EXPECT_DOUBLE_EQ(defaults.tolerance, 0.1);
  EXPECT_DOUBLE_EQ(defaults.smoothing, 0.2);
  EXPECT_DOUBLE_EQ(defaults.probe_factor, 0.75);
  EXPECT_EQ(defaults.probe_time, seconds(1));
  EXPECT_EQ(defaults.floor_ttl, seconds(60));
  EXPECT_EQ(defaults.stale_after, seconds(1));
  EXPECT_EQ(defaults.cold_start, ColdStart::kOpen);
  // Open until a queue is proven: the limit binds nowhere.
  EXPECT_EQ(CapacityLimit(defaults).limit(), 1000u);
  EXPECT_TRUE(CapacityLimit(defaults).open());
}

// The scenarios below that measure how the law tracks a capacity start it
// capped at `initial`, as an operator's cold_start = "initial" does: the open
// start is measured on its own (CapacityColdStartTest, CapacityNeverHarmTest).
CapacityLimitConfig capped_from_the_start() {
  CapacityLimitConfig config;
  config.cold_start = ColdStart::kInitial;
  return config;
}

TEST(CapacityLimitTest, MadeByTheFactory) {
  LimitConfig config;
  config.algorithm = LimitAlgorithmKind::kCapacity;
  config.capacity.initial = 33;
  config.capacity.cold_start = ColdStart::kInitial;
  EXPECT_EQ(make_limit_algorithm(config)->limit(), 33u);
  EXPECT_EQ(LimitConfig{}.algorithm, LimitAlgorithmKind::kCapacity);  // the default
}

TEST(CapacityLimitTest, NoLatencyHolds) {
  CapacityLimit limit{capped_from_the_start()};
  Samples samples;
  for (int i = 0; i < 50; ++i) EXPECT_EQ(limit.update(samples.next(std::nullopt, 20, 30, 0)), 20u);
}

TEST(CapacityLimitTest, SamplesOverTheLimitTeachNothing) {
  CapacityLimit limit{capped_from_the_start()};
  Samples samples;
  // A backlog of 500 the limit never admitted, very slow: no floor, no move.
  for (int i = 0; i < 50; ++i) EXPECT_EQ(limit.update(samples.next(3.0, 500, 100, 50)), 20u);
  EXPECT_FALSE(limit.floor_seconds().has_value());
}

TEST(CapacityLimitTest, UnconfirmedFloorIsProbedGentlyNeverPinnedToMin) {
  CapacityLimit limit{capped_from_the_start()};
  Samples samples;
  // Binding (in-flight at the limit, sheds) at a steady latency and rate.
  uint32_t lowest = limit.limit();
  bool probed = false;
  for (int i = 0; i < 30; ++i) {
    const uint32_t current = limit.update(samples.next(0.040, limit.limit(), 30, 50));
    lowest = std::min(lowest, current);
    probed = probed || limit.probing();
  }
  EXPECT_TRUE(probed);
  // One or two steps of 0.75 from 20 (the throughput held: still a queue).
  EXPECT_LE(lowest, 15u);
  EXPECT_GE(lowest, 11u);
}

TEST(CapacityLimitTest, ThroughputFallingUnderTheProbeConfirmsTheFloor) {
  CapacityLimit limit{capped_from_the_start()};
  Samples samples;
  // A service of capacity 10 x 20 ms: above the knee (limit 20) latency is
  // 40 ms at 50 per tick; at the probe's 15 and under, 20 ms x limit / 10.
  for (int i = 0; i < 200; ++i) {
    const uint32_t l = limit.limit();
    const double latency = 0.020 * std::max(1.0, l / 10.0);
    const uint64_t per_tick = std::min<uint64_t>(50, uint64_t{l} * 5);
    limit.update(samples.next(latency, l, 30, per_tick));
  }
  ASSERT_TRUE(limit.floor_seconds().has_value());
  EXPECT_TRUE(limit.floor_confirmed());
  EXPECT_NEAR(*limit.floor_seconds(), 0.020, 0.001);
  EXPECT_GE(limit.limit(), 10u);
  EXPECT_LE(limit.limit(), 12u);
}

TEST(CapacityLimitTest, AnIsolatedShedWithLowLatencyMakesRoom) {
  CapacityLimit limit{capped_from_the_start()};
  Samples samples;
  // Light load: in-flight well under the limit, latency steady.
  for (int i = 0; i < 40; ++i) limit.update(samples.next(0.020, 8, 0, 40));
  const uint32_t before = limit.limit();
  limit.update(samples.next(0.020, before, 3, 40));
  EXPECT_GT(limit.limit(), before);
}

// --- step 0: open until a queue is proven

TEST(CapacityOpenStartTest, ASteadyBusyServiceIsNeverCapped) {
  CapacityLimit limit{CapacityLimitConfig{}};
  Samples samples;
  // 100 slots x 200 ms at 0.7x: 70 in service, 35 responses a tick, for a minute.
  for (int i = 0; i < 600; ++i) {
    EXPECT_EQ(limit.update(samples.next(0.200, 70 + (i % 7), 0, 35)), 1000u) << "tick " << i;
  }
  EXPECT_TRUE(limit.open());
}

TEST(CapacityOpenStartTest, LongPollsRaiseInflightNotLatency) {
  CapacityLimit limit{CapacityLimitConfig{}};
  Samples samples;
  for (int i = 0; i < 20; ++i) limit.update(samples.next(0.020, 7, 0, 35));
  // 200 long polls arrive and stay: in service rises, the others' latency does not.
  for (int i = 0; i < 300; ++i) limit.update(samples.next(0.020, 207, 0, 35));
  EXPECT_TRUE(limit.open());
  EXPECT_EQ(limit.limit(), 1000u);
}

// netns (test_never_harm, long polls and push): 100 streams whose answers
// take under a millisecond, then 200 long polls arriving: in service rises
// twentyfold, the stream answers' p90 jitters from 0.4 to 1 ms. No queue.
TEST(CapacityOpenStartTest, LongPollsBesideInstantAnswersAreNoQueue) {
  CapacityLimit limit{CapacityLimitConfig{}};
  Samples samples;
  for (int i = 0; i < 10; ++i) limit.update(samples.next(0.0004, 10, 0, 7));
  for (uint32_t i = 1; i <= 20; ++i) {
    limit.update(samples.next(i % 2 == 0 ? 0.0010 : 0.0007, 10 + 10 * i, 0, 6));
  }
  EXPECT_TRUE(limit.open());
  EXPECT_EQ(limit.limit(), CapacityLimitConfig{}.max);
}

TEST(CapacityOpenStartTest, ARampUpIsNoQueue) {
  CapacityLimit limit{CapacityLimitConfig{}};
  Samples samples;
  // A load starting: in service, latency (the longer requests complete
  // later) and throughput all rise together.
  for (uint32_t i = 1; i <= 10; ++i)
    limit.update(samples.next(0.02 * i, 10 * i, 0, uint64_t{5} * i));
  EXPECT_TRUE(limit.open());
}

TEST(CapacityOpenStartTest, AGrowingQueueEndsItWithLittlesLaw) {
  CapacityLimit limit{CapacityLimitConfig{}};
  Samples samples;
  // 10 slots x 20 ms from cold into 1.6x: 50 responses a tick throughout,
  // in service and latency growing with the queue.
  limit.update(samples.next(0.055, 46, 0, 50));
  limit.update(samples.next(0.085, 91, 0, 50));
  EXPECT_TRUE(limit.open()) << "one tick of evidence is a burst";
  limit.update(samples.next(0.118, 136, 0, 50));
  EXPECT_FALSE(limit.open());
  // 500/s x 55 ms = 27.5: where the law starts from.
  EXPECT_EQ(limit.limit(), 27u);
}

// The daemon's ticks in netns: the eager server (10 x 20 ms, ~470/s) idle,
// then 1.6x from cold. The quiet ticks before must not make the load look
// like a ramp-up (they did: the queue was proven after 1.2 s, 372 in service).
TEST(CapacityOpenStartTest, AnOverloadAfterAQuietSpellIsProvenAsFast) {
  CapacityLimit limit{CapacityLimitConfig{}};
  Samples samples;
  for (int i = 0; i < 10; ++i) limit.update(samples.next(std::nullopt, 0, 0, 0));
  const double latency_ms[] = {21.4, 54.3, 86.2, 122.5, 158.1};
  const uint32_t inflight[] = {17, 47, 77, 105, 138};
  const uint64_t completions[] = {8, 47, 47, 48, 45};
  for (int i = 0; i < 5; ++i) {
    limit.update(samples.next(latency_ms[i] / 1000.0, inflight[i], 0, completions[i]));
  }
  EXPECT_FALSE(limit.open()) << "proven on the fifth tick of the load";
  EXPECT_LE(limit.limit(), 30u);
}

TEST(CapacityOpenStartTest, EvidenceMustComeOnTicksInARow) {
  CapacityLimit limit{CapacityLimitConfig{}};
  Samples samples;
  limit.update(samples.next(0.055, 46, 0, 50));
  limit.update(samples.next(0.118, 136, 0, 50));  // one tick of evidence
  for (int i = 0; i < 3; ++i) limit.update(samples.next(std::nullopt, 136, 0, 0));
  limit.update(samples.next(0.120, 140, 0, 50));  // another, not in a row
  EXPECT_TRUE(limit.open());
}

TEST(CapacityOpenStartTest, SheddingAtMaxEndsIt) {
  CapacityLimitConfig config;
  config.max = 200;
  CapacityLimit limit{config};
  Samples samples;
  EXPECT_EQ(limit.update(samples.next(std::nullopt, 150, 0, 0)), 200u);
  limit.update(samples.next(std::nullopt, 200, 40, 0));
  EXPECT_FALSE(limit.open());
  EXPECT_EQ(limit.limit(), config.initial);
}

// --- scenarios

using capacity_loop::Figures;
using capacity_loop::Loop;
using capacity_loop::record;
using capacity_loop::service;
using capacity_loop::Shape;
using capacity_loop::times_name;

// First second from which every later 2 s stretch has p99 <= 1.3x unloaded
// and goodput >= 93%: how long settling took.
double settling_seconds(const Loop& loop, int end) {
  for (int half_seconds = 0; half_seconds < 2 * (end - 2); ++half_seconds) {
    const double from = half_seconds / 2.0;
    bool settled = true;
    for (int step = 0; from + 2 * step + 2 <= end; ++step) {
      const double t = from + 2 * step;
      const Figures f = loop.figures(t, t + 2);
      if (f.p99_ratio > 1.3 || f.goodput < 0.93) {
        settled = false;
        break;
      }
    }
    if (settled) return from;
  }
  return end;
}

struct ColdCase {
  const char* name;
  uint32_t workers;
  ServiceTimes times;
  double load;
};

class CapacityColdStartTest : public ::testing::TestWithParam<ColdCase> {};

// Cold start at 20 into an overload, knowing nothing of the service (S = 20 ms).
TEST_P(CapacityColdStartTest, SettlesBusyAndNearUnloadedLatency) {
  const ColdCase& c = GetParam();
  const SimConfig config = service(c.workers, 20, c.times, c.load);
  Loop loop(config);
  loop.run(40);
  const Figures f = loop.figures(10, 40);
  record(c.name, f);
  // The open start's price: the queue of the ticks before the evidence.
  const Figures first = loop.figures(0, 6);
  record(std::string(c.name) + "_first_6s", first);
  ASSERT_TRUE(loop.proven_at().has_value()) << "an overload must end the open start";
  std::printf("[ figures  ] %s: queue proven at %.1f s\n", c.name, *loop.proven_at());
  EXPECT_LE(*loop.proven_at(), 0.5);
  RecordProperty("settling_s", std::to_string(settling_seconds(loop, 40)));
  std::printf("[ figures  ] %s: settled after %.1f s\n", c.name, settling_seconds(loop, 40));
  if (c.times == ServiceTimes::kFixed && c.workers == 10) {
    // Out of reach of any cap here (see the top of the file); the law sits
    // at C+1..C+2, on the best static caps' frontier.
    EXPECT_LE(f.p99_ratio, 1.35);
    EXPECT_GE(f.goodput, 0.93);
  } else {
    EXPECT_LE(f.p99_ratio, 1.25);
    EXPECT_GE(f.goodput, 0.95);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Services, CapacityColdStartTest,
    ::testing::Values(ColdCase{"x1_6_fixed_c10", 10, ServiceTimes::kFixed, 1.6},
                      ColdCase{"x1_6_fixed_c50", 50, ServiceTimes::kFixed, 1.6},
                      ColdCase{"x1_6_exp_c10", 10, ServiceTimes::kExponential, 1.6},
                      ColdCase{"x1_6_exp_c50", 50, ServiceTimes::kExponential, 1.6},
                      ColdCase{"x5_fixed_c10", 10, ServiceTimes::kFixed, 5.0},
                      ColdCase{"x5_fixed_c50", 50, ServiceTimes::kFixed, 5.0},
                      ColdCase{"x5_exp_c10", 10, ServiceTimes::kExponential, 5.0},
                      ColdCase{"x5_exp_c50", 50, ServiceTimes::kExponential, 5.0}),
    [](const ::testing::TestParamInfo<ColdCase>& info) { return std::string(info.param.name); });

// A slow service completes too few responses in the 500 ms rate window to
// make a reading (10 x 2 s: 5 a second); before the window stretched to
// hold 20, its overload was never proven (50 x 2 s: after 14.9 s, by
// chance). Stretched, the evidence must last one no-queue latency: 10 x 2 s
// is proven after 20.2 s, 50 x 2 s after 13.3 s.
TEST(CapacityOpenStartTest, ASlowServiceIsProvenToo) {
  for (uint32_t workers : {10u, 50u}) {
    Loop loop(service(workers, 2000, ServiceTimes::kFixed, 1.6, /*seed=*/3));
    loop.run(60);
    ASSERT_TRUE(loop.proven_at().has_value()) << workers << " x 2 s";
    std::printf("[ figures  ] slow_c%u: queue proven at %.1f s (%.1f service times)\n", workers,
                *loop.proven_at(), *loop.proven_at() / 2.0);
    EXPECT_LE(*loop.proven_at(), 12 * 2.0) << workers << " x 2 s";
  }
}

// Never harm a healthy service, whatever its shape: from a cold start, at
// 0.7x and 0.9x, nothing is shed, although most of these carry more requests
// in service than any fixed initial limit would admit (200 x 1 s at 0.9x:
// 180). Two minutes, or 60 service times for the slowest.
class CapacityNeverHarmTest : public ::testing::TestWithParam<Shape> {};

TEST_P(CapacityNeverHarmTest, AHealthyServiceIsNeverShed) {
  const Shape& c = GetParam();
  for (ServiceTimes times : {ServiceTimes::kFixed, ServiceTimes::kExponential}) {
    for (double load : {0.7, 0.9}) {
      const SimConfig config = service(c.workers, c.service_ms, times, load, /*seed=*/9);
      Loop loop(config);
      const double seconds = std::max(120.0, 60 * c.service_ms / 1000.0);
      loop.run(seconds);
      const std::string name = std::string(c.name) +
                               (times == ServiceTimes::kFixed ? "_fixed_" : "_exp_") +
                               std::to_string(static_cast<int>(load * 100));
      const Figures f = loop.figures(0, seconds);
      record(name, f);
      EXPECT_EQ(f.sheds, 0u) << name;
      EXPECT_TRUE(loop.limit().open()) << name << ": no queue, no evidence of one";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, CapacityNeverHarmTest,
                         ::testing::Values(Shape{"fast_c10", 10, 20}, Shape{"busy_c100", 100, 200},
                                           Shape{"high_concurrency_c200", 200, 1000},
                                           Shape{"slow_c50", 50, 2000},
                                           Shape{"slow_c10", 10, 2000}),
                         capacity_loop::shape_name);

// A slow service (S = 200 ms: 50 responses a second at C = 10) gives the
// quantile few samples: the targets are not met yet. Guards against the
// failures that matter most (collapse to min, runaway) and records figures.
TEST(CapacitySlowServiceTest, NeitherCollapsesNorRunsAway) {
  for (ServiceTimes times : {ServiceTimes::kFixed, ServiceTimes::kExponential}) {
    for (uint32_t workers : {10u, 50u}) {
      const SimConfig config = service(workers, 200, times, 1.6);
      Loop loop(config, capped_from_the_start());
      loop.run(60);
      const Figures f = loop.figures(20, 60);
      const std::string name = std::string("slow_") +
                               (times == ServiceTimes::kFixed ? "fixed" : "exp") + "_c" +
                               std::to_string(workers);
      record(name, f);
      EXPECT_GE(f.goodput, 0.6) << name;
      EXPECT_LE(f.p99_ratio, 3.0) << name;
    }
  }
}

// The law starts while the server already holds a backlog of 5 s at 1.6x with
// no limit: samples over the limit must not become the floor.
TEST(CapacityBacklogTest, StartsInTheMiddleOfAnOverload) {
  for (ServiceTimes times : {ServiceTimes::kFixed, ServiceTimes::kExponential}) {
    for (uint32_t workers : {10u, 50u}) {
      const SimConfig config = service(workers, 20, times, 1.6, /*seed=*/3);
      Loop loop(config);
      loop.service().set_limit(0xffffffffu);
      loop.service().run(Seconds(5), [](const SimTick&) { return 0xffffffffu; });
      const uint32_t backlog = loop.service().ticks().back().inflight;
      ASSERT_GT(backlog, 10u * workers) << "a backlog is inside the server";
      loop.service().set_limit(loop.limit().limit());
      loop.run(40);
      const Figures f = loop.figures(5 + 15, 5 + 40);
      const std::string name = std::string("backlog_") +
                               (times == ServiceTimes::kFixed ? "fixed" : "exp") + "_c" +
                               std::to_string(workers);
      record(name, f);
      const bool hard = times == ServiceTimes::kFixed && workers == 10;  // see the top
      EXPECT_LE(f.p99_ratio, hard ? 1.3 : 1.25) << name;
      EXPECT_GE(f.goodput, hard ? 0.93 : 0.95) << name;
    }
  }
}

// 0.7x load for five minutes: the limit never binds, from the first tick
// (before the open start, C = 50's 35 in flight met the initial 20 as an
// overload and shed for its first 30 s).
TEST(CapacityLightLoadTest, NeverSheds) {
  for (ServiceTimes times : {ServiceTimes::kFixed, ServiceTimes::kExponential}) {
    for (uint32_t workers : {10u, 50u}) {
      const SimConfig config = service(workers, 20, times, 0.7, /*seed=*/4);
      Loop loop(config);
      loop.run(300);
      const Figures f = loop.figures(0, 300);
      const std::string name = std::string("light_") +
                               (times == ServiceTimes::kFixed ? "fixed" : "exp") + "_c" +
                               std::to_string(workers);
      record(name, f);
      EXPECT_EQ(f.sheds, 0u) << name;
    }
  }
}

struct ChangeCase {
  const char* name;
  ServiceTimes times;
  bool slower;  // S doubles; otherwise C halves
};

class CapacityChangeTest : public ::testing::TestWithParam<ChangeCase> {};

TEST_P(CapacityChangeTest, RefindsTheCapacityBothWays) {
  const ChangeCase& c = GetParam();
  const SimConfig config = service(10, 20, c.times, 1.6, /*seed=*/5);
  SimConfig halved = config;
  if (c.slower) {
    halved.service_time = config.service_time * 2;
  } else {
    halved.workers = config.workers / 2;
  }
  Loop loop(config, capped_from_the_start());
  loop.run(30);
  if (c.slower) {
    loop.service().set_service_time(halved.service_time);
  } else {
    loop.service().set_workers(halved.workers);
  }
  loop.run(30);
  const Figures during = loop.figures(32, 60, halved);
  if (c.slower) {
    loop.service().set_service_time(config.service_time);
  } else {
    loop.service().set_workers(config.workers);
  }
  loop.run(30);
  double back_after = 30;
  for (int half_seconds = 0; half_seconds <= 56; ++half_seconds) {
    const double t = 60 + half_seconds / 2.0;
    if (loop.figures(t, t + 2).goodput >= 0.95) {
      back_after = t - 60;
      break;
    }
  }
  const Figures after = loop.figures(70, 90);
  record(std::string(c.name) + "_halved", during);
  record(std::string(c.name) + "_restored", after);
  RecordProperty("goodput_back_after_s", std::to_string(back_after));
  std::printf("[ figures  ] %s: goodput >= 95%% %.1f s after the capacity came back\n", c.name,
              back_after);
  // Fixed service times at C = 5 meet the phase effect described at the top.
  EXPECT_LE(during.p99_ratio, c.times == ServiceTimes::kFixed ? 1.45 : 1.25);
  EXPECT_GE(during.goodput, 0.85);
  EXPECT_LE(back_after, 10.0);
  EXPECT_GE(after.goodput, 0.93);
}

INSTANTIATE_TEST_SUITE_P(
    Changes, CapacityChangeTest,
    ::testing::Values(ChangeCase{"workers_halve_fixed", ServiceTimes::kFixed, false},
                      ChangeCase{"workers_halve_exp", ServiceTimes::kExponential, false},
                      ChangeCase{"service_doubles_fixed", ServiceTimes::kFixed, true},
                      ChangeCase{"service_doubles_exp", ServiceTimes::kExponential, true}),
    [](const ::testing::TestParamInfo<ChangeCase>& info) { return std::string(info.param.name); });

// The bench's capacity step from an open start: 0.7x for 4 s (the limit
// never binds), then half the slots for 4 s (1.4x of them), then all again.
// The halved capacity must be found within 2 s: the start on proof comes
// from the floor of the healthy seconds before. From `initial` (20, four
// times the 5 slots left) the limit averaged 17 to 24 over those 2 s, and
// the p99 was 2.0x (exponential) and 3.6x (fixed).
TEST(CapacityOpenStartTest, AHalvedCapacityAfterHealthySecondsIsFoundWithin2s) {
  for (ServiceTimes times : {ServiceTimes::kFixed, ServiceTimes::kExponential}) {
    const SimConfig config = service(10, 20, times, 0.7, /*seed=*/7);
    SimConfig halved = config;
    halved.workers = config.workers / 2;
    Loop loop(config);
    loop.run(4);
    // The simulator's load is relative to its capacity: the same arrivals.
    loop.service().set_workers(halved.workers);
    loop.service().set_load(2 * config.load);
    loop.run(4);
    loop.service().set_workers(config.workers);
    loop.service().set_load(config.load);
    loop.run(12);
    const std::string name = std::string("open_step_") + times_name(times);
    const Figures before = loop.figures(0.5, 4);
    const Figures settled = loop.figures(6, 8, halved);
    const Figures restored = loop.figures(18, 20);
    record(name + "_before", before);
    record(name + "_halved_from_2s", settled);
    record(name + "_restored_from_10s", restored);
    std::printf("[ figures  ] %s: proven at +%.2f s after the halving\n", name.c_str(),
                loop.proven_at().value_or(-1.0) - 4);
    EXPECT_EQ(before.sheds, 0u) << name;
    // Fixed times: the phase effect at the top. Exponential: the start is
    // the p90 floor times the rate, above the slots; the gradient takes it
    // down over the next seconds (as in HalfLoadThenOverload, 1.3x).
    EXPECT_LE(settled.p99_ratio, times == ServiceTimes::kFixed ? 1.45 : 1.3) << name;
    // The probe that confirms the floor falls in these 2 s.
    EXPECT_GE(settled.goodput, 0.7) << name;
    // What was served before the halving served again within 10 s, as in
    // CapacityChangeTest (the limit, now in force, meets a burst or two).
    EXPECT_GE(restored.goodput, 0.9 * before.goodput) << name;
  }
}

// 30 minutes of 1.6x: the limit must not creep (Gradient2's failure) nor sink.
TEST(CapacityDriftTest, ThirtyMinutesOfOverloadDoNotMoveTheLimit) {
  for (ServiceTimes times : {ServiceTimes::kFixed, ServiceTimes::kExponential}) {
    const SimConfig config = service(10, 20, times, 1.6, /*seed=*/6);
    Loop loop(config, capped_from_the_start());
    loop.run(1800);
    const Figures minute2 = loop.figures(60, 120);
    const Figures last = loop.figures(1740, 1800);
    const Figures all = loop.figures(60, 1800);
    const double drift = last.mean_limit / minute2.mean_limit - 1.0;
    const std::string name =
        std::string("drift_") + (times == ServiceTimes::kFixed ? "fixed" : "exp");
    record(name, all);
    RecordProperty(name + "_drift", std::to_string(drift));
    std::printf("[ figures  ] %s: minute 2 limit %.2f, last minute %.2f, drift %+.1f%%\n",
                name.c_str(), minute2.mean_limit, last.mean_limit, 100 * drift);
    EXPECT_LE(std::abs(drift), 0.10);
    // Sheds are only what the capacity requires: the service stays busy.
    EXPECT_GE(all.goodput, 0.93);
  }
}

// Keep-alive clients: 40 connections of 10 requests each against C = 10; the
// limit caps connections, and a shed client retries after 50 ms.
TEST(CapacityKeepAliveTest, CapsConnectionsNearTheCapacity) {
  SimConfig config = service(10, 20, ServiceTimes::kExponential, 0.0, /*seed=*/7);
  config.clients = 40;
  Loop loop(config, capped_from_the_start());
  loop.run(60);
  const Figures f = loop.figures(20, 60);
  record("keepalive_exp_c10_m40", f);
  EXPECT_GE(f.goodput, 0.9);
  EXPECT_LE(f.p99_ratio, 1.5);
  EXPECT_LT(f.mean_limit, 30.0);
}

// Keep-alive clients that hold their connections (a pool of 50 against
// C = 10, none closing): a probe cannot lower what is in flight, so its
// latency is that of the held connections, not a floor. The law must not
// confirm it, nor grow the limit to admit more of the pool.
TEST(CapacityKeepAliveTest, HeldConnectionsTeachNoFloorAndGetNoCompany) {
  for (ServiceTimes times : {ServiceTimes::kFixed, ServiceTimes::kExponential}) {
    SimConfig config = service(10, 20, times, 0.0, /*seed=*/8);
    config.clients = 50;
    config.requests_per_connection = 1000000;
    Loop loop(config, capped_from_the_start());
    loop.run(30);
    const std::string name = times == ServiceTimes::kFixed ? "held_fixed" : "held_exp";
    uint32_t most_inflight = 0;
    for (const sim::SimTickRecord& tick : loop.service().ticks()) {
      most_inflight = std::max(most_inflight, tick.inflight);
    }
    record(name, loop.figures(5, 30));
    const CapacityLimitConfig defaults;
    // The first gradient step, before the first probe, may add one.
    EXPECT_LE(most_inflight, defaults.initial + 1) << name;
    EXPECT_LE(loop.limit().limit(), defaults.initial) << name;
    EXPECT_FALSE(loop.limit().floor_confirmed()) << name;
  }
}

// Why no cold start catches a keep-alive pool that saturates the service
// from its first second (issue #49, point 4): what the kernel shows of it is
// what a busy healthy service shows. A pool of 50 on 10 slots x 20 ms keeps
// 50 in service (40 of them queued) at 500 a second and 100 ms; a pool of 50
// on 50 slots x 100 ms keeps 50 in service (none queued) at 500 a second
// and 100 ms. Nothing grows, so no tick rises over another: the open start
// proves neither. Only a lower cap tells them apart, and it refuses the
// healthy one's requests: at a cap of 25 the pool keeps its throughput, the
// healthy service loses half of it. That probe needs a prior (a warm start,
// CapacityWarmStartTest.APoolSaturatingFromTheRestart); cold, the operator
// sets what it knows (README, "What it does not do well yet").
TEST(CapacityKeepAliveTest, APoolFromTheStartShowsWhatABusyHealthyServiceShows) {
  struct Seen {
    double latency = 0.0;  // the median tick's latency signal, s
    double inflight = 0.0;
    double rate = 0.0;  // completions a second
    bool proven = false;
    double capped_rate = 0.0;  // completions a second under a cap of 25
  };
  constexpr uint32_t kPool = 50;
  constexpr uint32_t kProbeCap = 25;
  const auto median = [](std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  const auto seen = [&](uint32_t workers, double service_ms) {
    SimConfig config = service(workers, service_ms, ServiceTimes::kFixed, 0.0, /*seed=*/21);
    config.clients = kPool;
    Loop loop(config);
    loop.run(30);
    std::vector<double> latency;
    std::vector<double> inflight;
    uint64_t completions = 0;
    for (const sim::SimTickRecord& tick : loop.service().ticks()) {
      if (tick.at <= 2.0) continue;
      inflight.push_back(tick.inflight);
      completions += tick.completions;
    }
    for (const sim::SimCompletion& c : loop.service().completions()) {
      if (c.arrived >= 2.0) latency.push_back(c.latency);
    }
    Seen s;
    s.latency = median(latency);
    s.inflight = median(inflight);
    s.rate = static_cast<double>(completions) / 28.0;
    s.proven = loop.proven_at().has_value();
    sim::SimService probed(config);
    probed.run(Seconds(30), [](const SimTick&) { return kProbeCap; });
    uint64_t capped = 0;
    for (const sim::SimTickRecord& tick : probed.ticks()) {
      if (tick.at > 10.0) capped += tick.completions;
    }
    s.capped_rate = static_cast<double>(capped) / 20.0;
    return s;
  };
  const Seen pool = seen(10, 20);
  const Seen busy = seen(kPool, 100);
  std::printf(
      "[ figures  ] pool 50 on 10 x 20 ms: %.1f ms, %.0f in service, %.0f/s; 50 x 100 ms: "
      "%.1f ms, %.0f in service, %.0f/s; at a cap of %u: %.0f/s and %.0f/s\n",
      pool.latency * 1e3, pool.inflight, pool.rate, busy.latency * 1e3, busy.inflight, busy.rate,
      kProbeCap, pool.capped_rate, busy.capped_rate);
  EXPECT_NEAR(pool.latency, busy.latency, 0.05 * busy.latency);
  EXPECT_NEAR(pool.inflight, busy.inflight, 0.05 * busy.inflight);
  EXPECT_NEAR(pool.rate, busy.rate, 0.05 * busy.rate);
  EXPECT_FALSE(pool.proven);
  EXPECT_FALSE(busy.proven);
  EXPECT_GE(pool.capped_rate, 0.9 * pool.rate);
  EXPECT_LE(busy.capped_rate, 0.6 * busy.rate);
}

}  // namespace
}  // namespace edgeshed::law
