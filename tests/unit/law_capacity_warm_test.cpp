// The capacity limit's knowledge: what it learns of a healthy service, and a
// warm start from what an earlier run learnt (issue "Requests, not
// connections", point 3). Scenarios against the simulated service.
#include <gtest/gtest.h>

#include <cstdio>
#include <optional>
#include <string>

#include "law/capacity_limit.h"
#include "law/limit_algorithm.h"
#include "unit/capacity_loop.h"
#include "unit/sim_service.h"

namespace edgeshed::law {
namespace {

using capacity_loop::Figures;
using capacity_loop::Loop;
using capacity_loop::record;
using capacity_loop::service;
using capacity_loop::Shape;
using capacity_loop::shape_name;
using capacity_loop::times_name;
using sim::Seconds;
using sim::ServiceTimes;
using sim::SimConfig;
using sim::SimTick;

// What a run at half load for a minute learns (the runbook's observe mode).
Knowledge learnt_at_half_load(uint32_t workers, double service_ms, ServiceTimes times) {
  Loop loop(service(workers, service_ms, times, 0.5, /*seed=*/5));
  loop.run(60);
  const std::optional<Knowledge> knowledge = loop.limit().knowledge();
  EXPECT_TRUE(knowledge.has_value());
  return knowledge.value_or(Knowledge{});
}

TEST(CapacityKnowledgeTest, NothingIsTrustedBeforeEnoughTicks) {
  Loop loop(service(10, 20, ServiceTimes::kFixed, 0.5));
  loop.run(2);
  EXPECT_FALSE(loop.limit().knowledge().has_value());
}

TEST(CapacityKnowledgeTest, AHealthyServiceTeachesItsFloorRateAndConcurrency) {
  for (ServiceTimes times : {ServiceTimes::kFixed, ServiceTimes::kExponential}) {
    const SimConfig config = service(10, 20, times, 0.5);
    const Knowledge k = learnt_at_half_load(10, 20, times);
    const double unloaded = sim::unloaded_quantile(config, 0.9);
    std::printf(
        "[ figures  ] %s: floor %.1f ms (unloaded p90 %.1f), %.0f/s, %u in service (peak "
        "%u), %lu ticks\n",
        times_name(times), k.floor_seconds * 1e3, unloaded * 1e3, k.rate, k.inflight,
        k.peak_inflight, static_cast<unsigned long>(k.readings));
    EXPECT_GE(k.floor_seconds, 0.9 * unloaded) << times_name(times);
    EXPECT_LE(k.floor_seconds, 1.3 * unloaded) << times_name(times);
    EXPECT_NEAR(k.rate, 250.0, 25.0) << times_name(times);
    EXPECT_GE(k.peak_inflight, k.inflight);
    EXPECT_GE(k.readings, 500u);
  }
}

// An overload before the law: its ticks look healthy to the open start (the
// backlog's own latency is the lowest it has seen). Until a probe confirms a
// floor, there is nothing to keep; then the floor is the service's.
TEST(CapacityKnowledgeTest, ABacklogIsNoKnowledgeUntilAProbeConfirmsAFloor) {
  const SimConfig config = service(10, 20, ServiceTimes::kExponential, 1.6, /*seed=*/3);
  Loop loop(config);
  loop.service().run(Seconds(5), [](const SimTick&) { return 0xffffffffu; });
  loop.service().set_limit(loop.limit().limit());
  loop.run(10);
  ASSERT_FALSE(loop.limit().open());
  std::optional<Knowledge> k = loop.limit().knowledge();
  if (!loop.limit().floor_confirmed()) {
    EXPECT_FALSE(k.has_value());
  }
  loop.run(30);
  ASSERT_TRUE(loop.limit().floor_confirmed());
  k = loop.limit().knowledge();
  ASSERT_TRUE(k.has_value());
  const double unloaded = sim::unloaded_quantile(config, 0.9);
  EXPECT_LE(k->floor_seconds, 1.5 * unloaded);
}

// One case run twice, cold and warm (index 0 and 1): when the queue was
// proven, in seconds after the law's start (`backlog_s` of overload without
// a law before it), and the figures over [from, to) after that start.
struct ColdWarm {
  std::optional<double> proven[2];
  Figures figures[2];
};

ColdWarm cold_and_warm(const std::string& name, const SimConfig& config, const Knowledge& knowledge,
                       double backlog_s, double run_s, double from, double to) {
  ColdWarm out;
  for (int warm = 0; warm < 2; ++warm) {
    Loop loop(config);
    if (warm) loop.warm_start(knowledge);
    if (backlog_s > 0) {
      loop.service().run(Seconds(backlog_s), [](const SimTick&) { return 0xffffffffu; });
      loop.service().set_limit(loop.limit().limit());
    }
    loop.run(run_s);
    if (loop.proven_at()) out.proven[warm] = *loop.proven_at() - backlog_s;
    out.figures[warm] = loop.figures(backlog_s + from, backlog_s + to);
    const std::string run = name + (warm ? "_warm" : "_cold");
    record(run, out.figures[warm]);
    std::printf("[ figures  ] %s: queue proven %.1f s after the start\n", run.c_str(),
                out.proven[warm].value_or(-1.0));
  }
  return out;
}

// The daemon restarts while the service is overloaded and holds a backlog
// (5 s at 1.6x, no limit). The backlog keeps growing, so its queue is proven
// on the first ticks cold or warm (a learnt floor counts only once a tick
// agrees with it, and none of an overload does).
TEST(CapacityWarmStartTest, ARestartInTheMiddleOfAnOverloadIsProvenAtOnce) {
  for (ServiceTimes times : {ServiceTimes::kFixed, ServiceTimes::kExponential}) {
    const ColdWarm c = cold_and_warm(std::string("restart_in_overload_") + times_name(times),
                                     service(10, 20, times, 1.6, /*seed=*/3),
                                     learnt_at_half_load(10, 20, times), 5, 15, 5, 15);
    ASSERT_TRUE(c.proven[1].has_value());
    EXPECT_LE(*c.proven[1], 0.5) << times_name(times);
    if (c.proven[0]) {
      EXPECT_LE(*c.proven[1], *c.proven[0]) << times_name(times);
    }
    EXPECT_LE(c.figures[1].p99_ratio, c.figures[0].p99_ratio * 1.05) << times_name(times);
  }
}

// Seed 000's case, 10 x 20 ms at 1.6x for the 2.5 s of its 2,000 requests,
// restarted at the moment the overload begins: the queue of the open start's
// first ticks, cold against warm.
TEST(CapacityWarmStartTest, AnOverloadAtTheRestart) {
  for (ServiceTimes times : {ServiceTimes::kFixed, ServiceTimes::kExponential}) {
    const ColdWarm c = cold_and_warm(std::string("overload_at_restart_") + times_name(times),
                                     service(10, 20, times, 1.6, /*seed=*/7),
                                     learnt_at_half_load(10, 20, times), 0, 10, 0, 2.5);
    ASSERT_TRUE(c.proven[0].has_value() && c.proven[1].has_value());
    EXPECT_LE(*c.proven[1], *c.proven[0]) << times_name(times);
    EXPECT_LE(c.figures[1].p99_ratio, c.figures[0].p99_ratio * 1.05) << times_name(times);
  }
}

// What was learnt at half load must not make a busier healthy service look
// queued: 0.7x and 0.9x after a warm start shed nothing.
class CapacityWarmNeverHarmTest : public ::testing::TestWithParam<Shape> {};

TEST_P(CapacityWarmNeverHarmTest, ABusierHealthyServiceIsNeverShed) {
  const Shape& c = GetParam();
  for (ServiceTimes times : {ServiceTimes::kFixed, ServiceTimes::kExponential}) {
    const Knowledge knowledge = learnt_at_half_load(c.workers, c.service_ms, times);
    for (double load : {0.7, 0.9}) {
      Loop loop(service(c.workers, c.service_ms, times, load, /*seed=*/9));
      loop.warm_start(knowledge);
      const double seconds = std::max(60.0, 30 * c.service_ms / 1000.0);
      loop.run(seconds);
      const std::string name = std::string("warm_") + c.name + "_" + times_name(times) + "_" +
                               std::to_string(static_cast<int>(load * 100));
      const Figures f = loop.figures(0, seconds);
      record(name, f);
      EXPECT_EQ(f.sheds, 0u) << name;
      EXPECT_TRUE(loop.limit().open()) << name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, CapacityWarmNeverHarmTest,
                         ::testing::Values(Shape{"fast_c10", 10, 20}, Shape{"busy_c100", 100, 200},
                                           Shape{"high_concurrency_c200", 200, 1000}),
                         shape_name);

// The service got slower by itself (a deploy: 20 ms learnt, 30 ms now) and
// runs at 0.9x of its new capacity: learnt knowledge must not refuse it.
TEST(CapacityWarmStartTest, AServiceThatGotSlowerIsNoQueue) {
  for (ServiceTimes times : {ServiceTimes::kFixed, ServiceTimes::kExponential}) {
    const Knowledge knowledge = learnt_at_half_load(10, 20, times);
    Loop loop(service(10, 30, times, 0.9, /*seed=*/11));
    loop.warm_start(knowledge);
    loop.run(60);
    const Figures f = loop.figures(0, 60);
    record(std::string("slower_") + times_name(times), f);
    EXPECT_EQ(f.sheds, 0u) << times_name(times);
  }
}

// Knowledge of another service on the port (20 ms learnt, a 200 x 1 s
// service now at 0.9x): no tick agrees with it, so it is ignored, and not
// kept in place of what this run learns.
TEST(CapacityWarmStartTest, KnowledgeOfAnotherServiceIsIgnored) {
  const Knowledge knowledge = learnt_at_half_load(10, 20, ServiceTimes::kFixed);
  Loop loop(service(200, 1000, ServiceTimes::kExponential, 0.9, /*seed=*/13));
  loop.warm_start(knowledge);
  loop.run(2);
  EXPECT_FALSE(loop.limit().knowledge().has_value());
  loop.run(58);
  const Figures f = loop.figures(0, 60);
  record("another_service", f);
  EXPECT_EQ(f.sheds, 0u);
  const std::optional<Knowledge> learnt = loop.limit().knowledge();
  ASSERT_TRUE(learnt.has_value());
  EXPECT_GT(learnt->floor_seconds, 1.0);
}

// The runbook's rollout: a minute at half load (observe mode: the law runs
// the same), then an overload at 1.6x. The limit starts where Little's law
// puts the learnt floor at the saturated rate: before, clamped to at most
// 4 x initial (80), 100 x 200 ms exponential completed 62% of capacity from
// 2 s on, 200 x 1 s exponential 55%.
TEST(CapacityWarmStartTest, HalfLoadThenOverload) {
  for (const Shape& c : {Shape{"fast_c10", 10, 20}, Shape{"busy_c100", 100, 200},
                         Shape{"high_concurrency_c200", 200, 1000}}) {
    for (ServiceTimes times : {ServiceTimes::kFixed, ServiceTimes::kExponential}) {
      Loop loop(service(c.workers, c.service_ms, times, 0.5, /*seed=*/5));
      loop.run(60);
      loop.service().set_load(1.6);
      loop.run(20);
      const std::string name =
          std::string("half_then_overload_") + c.name + "_" + times_name(times);
      const Figures first = loop.figures(60, 62);
      const Figures after = loop.figures(62, 80);
      record(name + "_first_2s", first);
      record(name + "_from_2s", after);
      std::printf("[ figures  ] %s: proven at +%.1f s\n", name.c_str(),
                  loop.proven_at().value_or(-1.0) - 60);
      if (c.workers == 200 && times == ServiceTimes::kFixed) {
        // Proven only after 2.9 s (the 1 s responses fill the window
        // slowly): the queue of those seconds drains for long after.
        EXPECT_GE(after.goodput, 0.5) << name;
        continue;
      }
      EXPECT_LE(after.p99_ratio, 1.3) << name;
      EXPECT_GE(after.goodput, 0.9) << name;
    }
  }
}

// A keep-alive pool that saturates the service from the daemon's first tick
// (50 connections of 10 requests each on 10 x 20 ms; a refused client
// retries after 50 ms), after a restart with what half load taught: no tick
// grows the queue, so only the knowledge can tell it.
TEST(CapacityWarmStartTest, APoolSaturatingFromTheRestart) {
  for (ServiceTimes times : {ServiceTimes::kFixed, ServiceTimes::kExponential}) {
    SimConfig config = service(10, 20, times, 0.0, /*seed=*/15);
    config.clients = 50;
    const Knowledge knowledge = learnt_at_half_load(10, 20, times);
    for (int warm = 0; warm < 2; ++warm) {
      Loop loop(config);
      if (warm) loop.warm_start(knowledge);
      loop.run(30);
      const std::string name =
          std::string("pool_at_restart_") + times_name(times) + (warm ? "_warm" : "_cold");
      const Figures f = loop.figures(2, 30);
      record(name, f);
      std::printf("[ figures  ] %s: proven at %.2f s, p99 %.2fx, goodput %.2f\n", name.c_str(),
                  loop.proven_at().value_or(-1.0), f.p99_ratio, f.goodput);
      if (warm) {
        ASSERT_TRUE(loop.proven_at().has_value()) << name;
        EXPECT_LE(*loop.proven_at(), 1.0) << name;
        EXPECT_LE(f.p99_ratio, 1.5) << name;
        EXPECT_GE(f.goodput, 0.9) << name;
      }
    }
  }
}

// Knowledge of another service, slower and busier (20 ms learnt; 100 x
// 200 ms exponential now, at 0.9x: 450 a second, 90 in service): its first
// ticks are the strong prior, and the trial refutes it. The price is the
// trial's refusals, over its first 3 s; then the limit is open again, and
// what it learns is this service's.
TEST(CapacityWarmStartTest, AServiceThatFailsItsTrialIsOpenAgain) {
  const Knowledge knowledge = learnt_at_half_load(10, 20, ServiceTimes::kFixed);
  Loop loop(service(100, 200, ServiceTimes::kExponential, 0.9, /*seed=*/17));
  loop.warm_start(knowledge);
  loop.run(60);
  const Figures trial = loop.figures(0, 3);
  const Figures after = loop.figures(3, 60);
  record("failed_trial_first_3s", trial);
  record("failed_trial_after", after);
  std::printf("[ figures  ] failed trial: proven at %.2f s, %lu refused in the first 3 s\n",
              loop.proven_at().value_or(-1.0), static_cast<unsigned long>(trial.sheds));
  ASSERT_TRUE(loop.proven_at().has_value()) << "no prior: the case tests nothing";
  EXPECT_EQ(after.sheds, 0u);
  EXPECT_TRUE(loop.limit().open());
  const std::optional<Knowledge> learnt = loop.limit().knowledge();
  ASSERT_TRUE(learnt.has_value());
  EXPECT_GT(learnt->floor_seconds, 0.2);
}

}  // namespace
}  // namespace edgeshed::law
