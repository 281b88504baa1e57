#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <vector>

#include "common/fake_clock.h"
#include "daemon/steady_clock.h"
#include "law/control_law.h"

namespace edgeshed::law {
namespace {

using edgeshed::testing::FakeClock;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;
using ::testing::ElementsAre;

SignalReading reading(std::string name, double value, double target = 1.0, bool hard_safety = false,
                      bool stale = false) {
  return SignalReading{std::move(name), value, target, hard_safety, stale};
}

TickInputs inputs(std::vector<SignalReading> signals) {
  TickInputs in;
  in.signals = std::move(signals);
  return in;
}

class ControlLawTest : public ::testing::Test {
 protected:
  LevelControlLaw& law() {
    if (!law_) law_.emplace(config_, clock_);
    return *law_;
  }
  // One 100 ms tick.
  Decision tick(const TickInputs& in) {
    clock_.advance(milliseconds(100));
    return law().tick(in);
  }
  Decision tick(double pressure) { return tick(inputs({reading("load", pressure)})); }
  Decision ticks(int count, double pressure) {
    Decision decision;
    for (int i = 0; i < count; ++i) decision = tick(pressure);
    return decision;
  }

  ControlLawConfig config_;
  FakeClock clock_;
  std::optional<LevelControlLaw> law_;
};

TEST_F(ControlLawTest, StartsNormalAndAdmitsAll) {
  const Decision decision = tick(0.1);
  EXPECT_EQ(decision.level, Level::kNormal);
  EXPECT_FALSE(decision.level_changed);
  for (const ClassPolicy& policy : decision.policies) EXPECT_EQ(policy, kAdmitAll);
  EXPECT_EQ(decision.mode, Mode::kObserve);
  // The capacity limit starts open: it binds nowhere before a queue is seen.
  EXPECT_EQ(decision.adaptive_limit, law::CapacityLimitConfig{}.max);
}

TEST_F(ControlLawTest, ReportsLevelChangesWithThePreviousLevel) {
  EXPECT_FALSE(tick(1.5).level_changed);
  const Decision up = tick(1.5);
  EXPECT_TRUE(up.level_changed);
  EXPECT_EQ(up.previous_level, Level::kNormal);
  EXPECT_EQ(up.level, Level::kHigh);
  const Decision same = tick(1.5);
  EXPECT_FALSE(same.level_changed);
  EXPECT_EQ(same.previous_level, Level::kHigh);
}

TEST_F(ControlLawTest, NamesTheSignalsThatDroveIt) {
  const Decision decision = tick(inputs({reading("cpu", 0.5), reading("queue", 60.0, 40.0)}));
  EXPECT_DOUBLE_EQ(decision.pressure, 1.5);
  EXPECT_THAT(decision.drivers, ElementsAre("queue"));
}

TEST_F(ControlLawTest, PoliciesFollowTheLevel) {
  const Decision decision = ticks(2, 1.5);
  ASSERT_EQ(decision.level, Level::kHigh);
  EXPECT_EQ(decision.policy(TrafficClass::kBackground).admit_fraction, 0.0);
  EXPECT_EQ(decision.policy(TrafficClass::kNormal).inflight_cap, decision.adaptive_limit);
  EXPECT_EQ(decision.policy(TrafficClass::kCritical), kAdmitAll);
}

// --- hard safety

TEST_F(ControlLawTest, HardSafetySignalRaisesTheLevelAtOnce) {
  const Decision decision =
      tick(inputs({reading("memory", 1.4, 1.0, /*hard_safety=*/true), reading("queue", 0.1)}));
  EXPECT_EQ(decision.level, Level::kHigh);  // no enter_after dwell
  EXPECT_EQ(decision.hard_safety_floor, Level::kHigh);
}

TEST_F(ControlLawTest, HardSafetySignalKeepsTheLevelWhileItsPressureHolds) {
  const TickInputs memory_high = inputs({reading("memory", 1.4, 1.0, true), reading("queue", 0.0)});
  for (int i = 0; i < 100; ++i) EXPECT_EQ(tick(memory_high).level, Level::kHigh);
  // Once it eases, the normal slow way down applies.
  const TickInputs memory_low = inputs({reading("memory", 0.1, 1.0, true), reading("queue", 0.0)});
  EXPECT_EQ(tick(memory_low).level, Level::kHigh);
  Decision decision;
  for (int i = 0; i < 30; ++i) decision = tick(memory_low);
  EXPECT_EQ(decision.level, Level::kElevated);
}

TEST_F(ControlLawTest, HardSafetySignalIsNotOverriddenByAPin) {
  Overrides overrides;
  overrides.level = LevelPin{Level::kNormal, std::nullopt};
  law().set_overrides(overrides);
  const Decision decision = tick(inputs({reading("memory", 2.5, 1.0, true)}));
  EXPECT_EQ(decision.level, Level::kCritical);
  EXPECT_TRUE(decision.level_pinned);
}

TEST_F(ControlLawTest, StaleHardSafetySignalIsIgnored) {
  const Decision decision =
      tick(inputs({reading("memory", 5.0, 1.0, true, /*stale=*/true), reading("queue", 0.1)}));
  EXPECT_EQ(decision.level, Level::kNormal);
  EXPECT_EQ(decision.hard_safety_floor, Level::kNormal);
}

// --- stale signals

TEST_F(ControlLawTest, StaleSignalsDoNotEscalate) {
  const TickInputs in =
      inputs({reading("stuck", 9.0, 1.0, false, /*stale=*/true), reading("ok", 0.2)});
  Decision decision;
  for (int i = 0; i < 50; ++i) decision = tick(in);
  EXPECT_EQ(decision.level, Level::kNormal);
  EXPECT_FALSE(decision.all_stale);
}

TEST_F(ControlLawTest, AllStaleHoldKeepsTheLevel) {
  config_.all_stale = AllStalePolicy::kHold;
  ASSERT_EQ(ticks(2, 1.5).level, Level::kHigh);
  const TickInputs stale = inputs({reading("load", 0.0, 1.0, false, true)});
  Decision decision;
  for (int i = 0; i < 100; ++i) decision = tick(stale);
  EXPECT_EQ(decision.level, Level::kHigh);
  EXPECT_TRUE(decision.all_stale);
  EXPECT_FALSE(decision.fail_open);
}

TEST_F(ControlLawTest, AllStaleFailOpenDropsToNormalAndAdmitsAll) {
  config_.all_stale = AllStalePolicy::kFailOpen;
  // Even a normal level that restricts something is lifted.
  config_.policy.at(Level::kNormal, TrafficClass::kBackground) = PolicyRule::shed_all();
  ASSERT_EQ(ticks(2, 1.5).level, Level::kHigh);
  const Decision decision = tick(inputs({reading("load", 3.0, 1.0, false, true)}));
  EXPECT_TRUE(decision.fail_open);
  EXPECT_EQ(decision.level, Level::kNormal);
  EXPECT_TRUE(decision.level_changed);
  for (const ClassPolicy& policy : decision.policies) EXPECT_EQ(policy, kAdmitAll);
}

TEST_F(ControlLawTest, AfterFailOpenEscalationNeedsFreshEvidence) {
  config_.all_stale = AllStalePolicy::kFailOpen;
  ASSERT_EQ(ticks(2, 1.5).level, Level::kHigh);
  ASSERT_TRUE(tick(inputs({})).fail_open);  // no signals at all is all stale
  EXPECT_EQ(tick(1.5).level, Level::kNormal);
  EXPECT_EQ(tick(1.5).level, Level::kHigh);
}

// --- the queue gate

// A tick of 10 slots x 20 ms at half load, as the kernel measures it.
TickInputs healthy_service() {
  TickInputs in = inputs({reading("load", 0.1)});
  in.latency_seconds = 0.020;
  in.tail_latency_seconds = 0.022;
  in.completions = 25;
  in.inflight = {0, 5, 0};
  return in;
}

// A service seen healthy for a few seconds teaches its p99: with
// queue_gate = 2, the classes the adaptive limit caps get the gate at 2x of
// it, the others none, nor a class an operator pinned to a cap of their own.
TEST_F(ControlLawTest, TheQueueGateGoesWithTheAdaptiveLimit) {
  config_.policy = default_policy_table(kUnlimited, /*cap_below_high=*/true);
  config_.limit.capacity.queue_gate = 2.0;
  const TickInputs healthy = healthy_service();
  Decision decision = tick(healthy);
  EXPECT_FALSE(decision.queue_age.has_value()) << "nothing learnt yet";
  config_.limit.capacity.queue_gate = 0.0;
  law().reconfigure(config_);
  for (int i = 0; i < 30; ++i) decision = tick(healthy);
  EXPECT_FALSE(decision.queue_age.has_value()) << "no gate by default";
  config_.limit.capacity.queue_gate = 2.0;
  law().reconfigure(config_);
  for (int i = 0; i < 30; ++i) decision = tick(healthy);
  ASSERT_TRUE(decision.queue_age.has_value());
  EXPECT_NEAR(std::chrono::duration<double>(*decision.queue_age).count(), 0.044, 1e-6);
  EXPECT_EQ(decision.policy(TrafficClass::kNormal).queue_age, *decision.queue_age);
  EXPECT_EQ(decision.policy(TrafficClass::kBackground).queue_age, *decision.queue_age);
  EXPECT_EQ(decision.policy(TrafficClass::kCritical).queue_age, nanoseconds(0));

  Overrides overrides;
  ClassPin pin;
  pin.inflight_cap = 50u;
  overrides.classes[index_of(TrafficClass::kNormal)] = pin;
  law().set_overrides(overrides);
  decision = tick(healthy);
  EXPECT_EQ(decision.policy(TrafficClass::kNormal).queue_age, nanoseconds(0));
  EXPECT_EQ(decision.policy(TrafficClass::kBackground).queue_age, *decision.queue_age);
}

// What the gate saw proves the queue at once: the limit is no longer open.
TEST_F(ControlLawTest, TheGatesEvidenceProvesTheQueue) {
  config_.policy = default_policy_table(kUnlimited, /*cap_below_high=*/true);
  config_.limit.capacity.queue_gate = 2.0;
  const TickInputs healthy = healthy_service();
  for (int i = 0; i < 31; ++i) EXPECT_TRUE(tick(healthy).adaptive_limit_open);
  TickInputs queued = healthy;
  queued.inflight = {0, 14, 0};
  queued.gate_sheds = 3;
  const Decision decision = tick(queued);
  EXPECT_FALSE(decision.adaptive_limit_open);
  EXPECT_LT(decision.adaptive_limit, 1000u);
}

// --- overrides

TEST_F(ControlLawTest, LevelPinWinsUntilItExpires) {
  Overrides overrides;
  overrides.level = LevelPin{Level::kHigh, clock_.now() + seconds(10)};
  law().set_overrides(overrides);
  Decision decision = tick(0.0);
  EXPECT_EQ(decision.level, Level::kHigh);
  EXPECT_EQ(decision.law_level, Level::kNormal);
  EXPECT_TRUE(decision.level_pinned);
  EXPECT_EQ(decision.policy(TrafficClass::kBackground).admit_fraction, 0.0);

  clock_.advance(seconds(9));
  EXPECT_EQ(tick(0.0).level, Level::kHigh);  // 9.2 s
  clock_.advance(milliseconds(700));
  decision = tick(0.0);  // 10.0 s: expired
  EXPECT_EQ(decision.level, Level::kNormal);
  EXPECT_FALSE(decision.level_pinned);
  EXPECT_TRUE(decision.level_changed);
  EXPECT_FALSE(law().overrides().level.has_value());
}

TEST_F(ControlLawTest, LevelPinWithoutExpiryStaysUntilRemoved) {
  Overrides overrides;
  overrides.level = LevelPin{Level::kElevated, std::nullopt};
  law().set_overrides(overrides);
  clock_.advance(std::chrono::hours(24));
  EXPECT_EQ(tick(3.0).level, Level::kElevated);  // pinned below what the law says
  law().set_overrides(Overrides{});
  EXPECT_EQ(tick(3.0).level, Level::kCritical);  // the law kept running meanwhile
}

TEST_F(ControlLawTest, LevelPinWinsOverFailOpen) {
  config_.all_stale = AllStalePolicy::kFailOpen;
  Overrides overrides;
  overrides.level = LevelPin{Level::kHigh, std::nullopt};
  law().set_overrides(overrides);
  const Decision decision = tick(inputs({}));
  EXPECT_FALSE(decision.fail_open);
  EXPECT_EQ(decision.level, Level::kHigh);
}

TEST_F(ControlLawTest, ClassPinReplacesOnlyTheFieldsItSets) {
  Overrides overrides;
  ClassPin pin;
  pin.admit_fraction = 0.3;
  overrides.classes[index_of(TrafficClass::kNormal)] = pin;
  law().set_overrides(overrides);
  const Decision decision = ticks(2, 1.5);
  ASSERT_EQ(decision.level, Level::kHigh);
  const ClassPolicy& normal = decision.policy(TrafficClass::kNormal);
  EXPECT_EQ(normal.admit_fraction, 0.3);
  EXPECT_EQ(normal.inflight_cap, decision.adaptive_limit);  // still the law's
  EXPECT_TRUE(decision.class_pinned[index_of(TrafficClass::kNormal)]);
  EXPECT_FALSE(decision.class_pinned[index_of(TrafficClass::kBackground)]);
}

TEST_F(ControlLawTest, ClassPinExpires) {
  Overrides overrides;
  ClassPin pin;
  pin.inflight_cap = 5;
  pin.tokens_per_sec = 100;
  pin.burst = 10;
  pin.expires_at = clock_.now() + seconds(1);
  overrides.classes[index_of(TrafficClass::kBackground)] = pin;
  law().set_overrides(overrides);
  const ClassPolicy pinned = tick(0.0).policy(TrafficClass::kBackground);
  EXPECT_EQ(pinned.inflight_cap, 5u);
  EXPECT_EQ(pinned.tokens_per_sec, 100u);
  EXPECT_EQ(pinned.burst, 10u);
  clock_.advance(seconds(1));
  EXPECT_EQ(tick(0.0).policy(TrafficClass::kBackground), kAdmitAll);
}

TEST_F(ControlLawTest, ClassPinCannotTakeCriticalUnderItsFloor) {
  Overrides overrides;
  ClassPin pin;
  pin.admit_fraction = 0.0;
  pin.inflight_cap = 1;
  overrides.classes[index_of(TrafficClass::kCritical)] = pin;
  law().set_overrides(overrides);
  const ClassPolicy critical = tick(0.0).policy(TrafficClass::kCritical);
  EXPECT_EQ(critical.admit_fraction, 1.0);
  EXPECT_EQ(critical.inflight_cap, 16u);
}

TEST_F(ControlLawTest, ConfiguredCriticalShedIsClampedToTheFloor) {
  config_.policy.at(Level::kCritical, TrafficClass::kCritical) = PolicyRule::shed_all();
  const Decision decision = tick(5.0);
  ASSERT_EQ(decision.level, Level::kCritical);
  EXPECT_EQ(decision.policy(TrafficClass::kCritical).admit_fraction, 1.0);
}

TEST_F(ControlLawTest, ModeComesFromConfigUnlessPinned) {
  config_.mode = Mode::kEnforce;
  EXPECT_EQ(tick(0.0).mode, Mode::kEnforce);
  Overrides overrides;
  overrides.mode = ModePin{Mode::kOff, clock_.now() + seconds(5)};
  law().set_overrides(overrides);
  Decision decision = tick(0.0);
  EXPECT_EQ(decision.mode, Mode::kOff);
  EXPECT_TRUE(decision.mode_pinned);
  clock_.advance(seconds(5));
  decision = tick(0.0);
  EXPECT_EQ(decision.mode, Mode::kEnforce);
  EXPECT_FALSE(decision.mode_pinned);
}

TEST_F(ControlLawTest, OverridesReportTheirState) {
  Overrides overrides;
  EXPECT_TRUE(overrides.empty());
  overrides.mode = ModePin{Mode::kOff, std::nullopt};
  EXPECT_FALSE(overrides.empty());
  overrides.expire(seconds(1'000'000));
  EXPECT_FALSE(overrides.empty());  // no expiry: kept
  overrides.mode->expires_at = seconds(5);
  overrides.expire(seconds(5));
  EXPECT_TRUE(overrides.empty());
}

// --- the adaptive limit inside the law

TEST_F(ControlLawTest, LimitLearnsFromTheClassItCaps) {
  config_.limit.algorithm = LimitAlgorithmKind::kGradient;
  config_.limit.gradient.smoothing = 1.0;
  config_.limit.gradient.max_decrease_per_tick = 0.1;
  TickInputs idle = inputs({reading("load", 1.5)});
  idle.latency_seconds = 0.020;  // in-flight 0: teaches the baseline only
  tick(idle);
  ASSERT_EQ(tick(idle).level, Level::kHigh);  // normal now capped at the limit (20)

  // Lots of critical in flight, normal at its cap, and slow: the limit falls.
  // Counting all classes (520 > 20) would make the sample look uncapped.
  TickInputs slow = inputs({reading("load", 1.5)});
  slow.latency_seconds = 0.200;
  slow.inflight[index_of(TrafficClass::kCritical)] = 500;
  slow.inflight[index_of(TrafficClass::kNormal)] = 20;
  EXPECT_EQ(tick(slow).adaptive_limit, 10u);
}

TEST_F(ControlLawTest, LimitIgnoresSlowSamplesFromUncappedTraffic) {
  config_.limit.algorithm = LimitAlgorithmKind::kGradient;
  config_.limit.gradient.smoothing = 1.0;
  TickInputs teach = inputs({reading("load", 0.1)});
  teach.latency_seconds = 0.020;
  tick(teach);
  // Normal level caps nothing: a backlog of 300 is not the limit's doing.
  TickInputs backlog = inputs({reading("load", 0.1)});
  backlog.latency_seconds = 2.0;
  backlog.inflight[index_of(TrafficClass::kNormal)] = 300;
  EXPECT_EQ(tick(backlog).adaptive_limit, 20u);
}

TEST_F(ControlLawTest, ShedsOfAllClassesReachTheLimit) {
  config_.limit.algorithm = LimitAlgorithmKind::kAimd;
  TickInputs in = inputs({reading("load", 0.1)});
  in.sheds[index_of(TrafficClass::kBackground)] = 3;
  EXPECT_EQ(tick(in).adaptive_limit, 18u);  // AIMD backs off on sheds
}

// --- reload

TEST_F(ControlLawTest, ReconfigureKeepsLevelPinsAndLimitState) {
  config_.limit.algorithm = LimitAlgorithmKind::kGradient;
  config_.limit.gradient.smoothing = 1.0;
  TickInputs grow = inputs({reading("load", 1.5)});
  grow.latency_seconds = 0.020;
  grow.inflight[index_of(TrafficClass::kNormal)] = 20;
  tick(grow);
  const Decision before = tick(grow);
  ASSERT_EQ(before.level, Level::kHigh);
  ASSERT_GT(before.adaptive_limit, 20u);
  Overrides overrides;
  overrides.mode = ModePin{Mode::kOff, std::nullopt};
  law().set_overrides(overrides);

  ControlLawConfig reloaded = config_;
  reloaded.policy.at(Level::kHigh, TrafficClass::kBackground) = PolicyRule::admit_fraction(0.1);
  law().reconfigure(reloaded);
  const Decision after = tick(inputs({reading("load", 1.5)}));
  EXPECT_EQ(after.level, Level::kHigh);
  EXPECT_FALSE(after.level_changed);
  EXPECT_EQ(after.mode, Mode::kOff);
  EXPECT_EQ(after.adaptive_limit, before.adaptive_limit);
  EXPECT_EQ(after.policy(TrafficClass::kBackground).admit_fraction, 0.1);

  reloaded.limit.algorithm = LimitAlgorithmKind::kStatic;
  reloaded.limit.static_limit.limit = 7;
  law().reconfigure(reloaded);
  EXPECT_EQ(tick(inputs({reading("load", 1.5)})).adaptive_limit, 7u);
}

TEST(SteadyClockTest, IsMonotonic) {
  daemon::SteadyClock clock;
  const nanoseconds first = clock.now();
  EXPECT_GT(first.count(), 0);
  // cppcheck-suppress knownConditionTrueFalse ; two readings of a real clock, not one value
  EXPECT_GE(clock.now(), first);
}

TEST(FakeClockTest, AdvancesOnlyWhenTold) {
  FakeClock clock(seconds(5));
  EXPECT_EQ(clock.now(), seconds(5));
  clock.advance(milliseconds(250));
  EXPECT_EQ(clock.now(), milliseconds(5250));
}

}  // namespace
}  // namespace edgeshed::law
