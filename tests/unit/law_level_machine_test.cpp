#include <gtest/gtest.h>

#include <chrono>
#include <cmath>

#include "law/level_machine.h"

namespace edgeshed::law {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;

constexpr milliseconds kTick{100};

double just_below(double x) { return std::nextafter(x, 0.0); }
double just_above(double x) { return std::nextafter(x, 10.0); }

// Drives a LevelMachine one 100 ms tick at a time.
class LevelMachineTest : public ::testing::Test {
 protected:
  Level tick(double pressure, Level hard_safety_floor = Level::kNormal) {
    now_ += kTick;
    return machine_.update(pressure, hard_safety_floor, now_);
  }
  Level ticks(int count, double pressure) {
    Level level = machine_.level();
    for (int i = 0; i < count; ++i) level = tick(pressure);
    return level;
  }
  // Puts the machine at `level` with no pending evidence.
  void start_at(Level level) { machine_.reset(level); }

  LevelMachineConfig config_;
  LevelMachine machine_{config_};
  nanoseconds now_{seconds(100)};
};

// --- escalation: each enter threshold, just below / at / above, after the dwell

struct EnterCase {
  Level level;
  double enter;
};

class EnterThresholdTest : public LevelMachineTest,
                           public ::testing::WithParamInterface<EnterCase> {};

TEST_P(EnterThresholdTest, JustBelowEnterStaysOneLevelDown) {
  const EnterCase c = GetParam();
  EXPECT_LT(ticks(10, just_below(c.enter)), c.level);
}

TEST_P(EnterThresholdTest, AtEnterEntersAfterDwell) {
  const EnterCase c = GetParam();
  EXPECT_EQ(ticks(10, c.enter), c.level);
}

TEST_P(EnterThresholdTest, AboveEnterEntersAfterDwell) {
  const EnterCase c = GetParam();
  EXPECT_EQ(ticks(10, just_above(c.enter)), c.level);
}

INSTANTIATE_TEST_SUITE_P(Defaults, EnterThresholdTest,
                         ::testing::Values(EnterCase{Level::kElevated, 1.0},
                                           EnterCase{Level::kHigh, 1.3},
                                           EnterCase{Level::kCritical, 2.0}));

TEST_F(LevelMachineTest, DefaultsAreDocumentedValues) {
  EXPECT_EQ(config_.elevated.enter, 1.0);
  EXPECT_EQ(config_.elevated.exit, 0.8);
  EXPECT_EQ(config_.high.enter, 1.3);
  EXPECT_EQ(config_.high.exit, 1.0);
  EXPECT_EQ(config_.critical.enter, 2.0);
  EXPECT_EQ(config_.critical.exit, 1.5);
  EXPECT_EQ(config_.enter_after, 2u);
  EXPECT_EQ(config_.critical_enter_after, 1u);
  EXPECT_EQ(config_.exit_after, seconds(3));
}

TEST_F(LevelMachineTest, EscalationWaitsEnterAfterTicks) {
  EXPECT_EQ(tick(1.1), Level::kNormal);
  EXPECT_EQ(tick(1.1), Level::kElevated);
}

TEST_F(LevelMachineTest, OneTickUnderEnterRestartsTheDwell) {
  EXPECT_EQ(tick(1.1), Level::kNormal);
  EXPECT_EQ(tick(0.9), Level::kNormal);
  EXPECT_EQ(tick(1.1), Level::kNormal);
  EXPECT_EQ(tick(1.1), Level::kElevated);
}

TEST_F(LevelMachineTest, DwellCountsAnyHigherLevelAndJumpsToHighestMet) {
  EXPECT_EQ(tick(1.1), Level::kNormal);  // elevated met
  EXPECT_EQ(tick(1.5), Level::kHigh);    // high met now: skips elevated
}

TEST_F(LevelMachineTest, SkipsFromNormalToHigh) {
  EXPECT_EQ(tick(1.6), Level::kNormal);
  EXPECT_EQ(tick(1.6), Level::kHigh);
}

TEST_F(LevelMachineTest, CriticalIsEnteredInOneTick) { EXPECT_EQ(tick(2.0), Level::kCritical); }

TEST_F(LevelMachineTest, CriticalFromElevatedInOneTick) {
  start_at(Level::kElevated);
  EXPECT_EQ(tick(2.5), Level::kCritical);
}

TEST_F(LevelMachineTest, CriticalEnterAfterIsItsOwnDwell) {
  config_.critical_enter_after = 3;
  machine_ = LevelMachine(config_);
  EXPECT_EQ(tick(2.5), Level::kNormal);
  EXPECT_EQ(tick(2.5), Level::kHigh);  // enter_after met: as high as allowed without critical
  EXPECT_EQ(tick(2.5), Level::kCritical);
}

TEST_F(LevelMachineTest, EnterAfterOfOneEscalatesAtOnce) {
  config_.enter_after = 1;
  machine_ = LevelMachine(config_);
  EXPECT_EQ(tick(1.0), Level::kElevated);
}

TEST_F(LevelMachineTest, PressureOfTheCurrentLevelDoesNotCountAsHigher) {
  start_at(Level::kHigh);
  EXPECT_EQ(ticks(20, 1.5), Level::kHigh);
}

// --- de-escalation: exit thresholds, exit_after, one step at a time

struct ExitCase {
  Level level;
  double exit;
};

class ExitThresholdTest : public LevelMachineTest,
                          public ::testing::WithParamInterface<ExitCase> {};

TEST_P(ExitThresholdTest, JustBelowExitStepsDownAfterExitAfter) {
  const ExitCase c = GetParam();
  start_at(c.level);
  EXPECT_EQ(tick(just_below(c.exit)), c.level);                                    // timer starts
  EXPECT_EQ(ticks(29, just_below(c.exit)), c.level);                               // 2.9 s
  EXPECT_EQ(tick(just_below(c.exit)), static_cast<Level>(index_of(c.level) - 1));  // 3.0 s
}

TEST_P(ExitThresholdTest, AtExitStays) {
  const ExitCase c = GetParam();
  start_at(c.level);
  EXPECT_EQ(ticks(100, c.exit), c.level);
}

TEST_P(ExitThresholdTest, AboveExitStays) {
  const ExitCase c = GetParam();
  start_at(c.level);
  EXPECT_EQ(ticks(100, just_above(c.exit)), c.level);
}

INSTANTIATE_TEST_SUITE_P(Defaults, ExitThresholdTest,
                         ::testing::Values(ExitCase{Level::kElevated, 0.8},
                                           ExitCase{Level::kHigh, 1.0},
                                           ExitCase{Level::kCritical, 1.5}));

TEST_F(LevelMachineTest, StepsDownOneLevelAtATime) {
  start_at(Level::kCritical);
  // Zero pressure: every exit is met, yet each step takes its own exit_after.
  EXPECT_EQ(tick(0.0), Level::kCritical);
  EXPECT_EQ(ticks(30, 0.0), Level::kHigh);
  EXPECT_EQ(ticks(29, 0.0), Level::kHigh);
  EXPECT_EQ(tick(0.0), Level::kElevated);
  EXPECT_EQ(ticks(29, 0.0), Level::kElevated);
  EXPECT_EQ(tick(0.0), Level::kNormal);
}

TEST_F(LevelMachineTest, NextStepUsesTheNewLevelsExit) {
  start_at(Level::kHigh);
  // 0.9 is under high's exit (1.0) but not elevated's (0.8): one step only.
  EXPECT_EQ(ticks(31, 0.9), Level::kElevated);
  EXPECT_EQ(ticks(100, 0.9), Level::kElevated);
}

TEST_F(LevelMachineTest, DipAboveExitResetsTheExitTimer) {
  start_at(Level::kHigh);
  EXPECT_EQ(ticks(25, 0.5), Level::kHigh);  // 2.4 s below exit
  EXPECT_EQ(tick(1.1), Level::kHigh);       // back over exit: timer reset
  EXPECT_EQ(ticks(30, 0.5), Level::kHigh);  // 2.9 s since the new start
  EXPECT_EQ(tick(0.5), Level::kElevated);
}

TEST_F(LevelMachineTest, ExitAfterIsMeasuredWithTheClockNotTicks) {
  start_at(Level::kElevated);
  EXPECT_EQ(machine_.update(0.1, Level::kNormal, now_), Level::kElevated);
  EXPECT_EQ(machine_.update(0.1, Level::kNormal, now_ + milliseconds(2999)), Level::kElevated);
  EXPECT_EQ(machine_.update(0.1, Level::kNormal, now_ + milliseconds(3000)), Level::kNormal);
}

TEST_F(LevelMachineTest, ZeroExitAfterStepsDownEveryTick) {
  config_.exit_after = nanoseconds(0);
  machine_ = LevelMachine(config_);
  machine_.reset(Level::kCritical);
  EXPECT_EQ(tick(0.0), Level::kHigh);
  EXPECT_EQ(tick(0.0), Level::kElevated);
  EXPECT_EQ(tick(0.0), Level::kNormal);
}

TEST_F(LevelMachineTest, EscalationWinsOverAPendingExit) {
  start_at(Level::kElevated);
  EXPECT_EQ(ticks(20, 0.5), Level::kElevated);
  EXPECT_EQ(ticks(2, 1.4), Level::kHigh);
}

// --- hard-safety floor, hold, reset

TEST_F(LevelMachineTest, HardSafetyFloorIsEnteredWithoutDwell) {
  EXPECT_EQ(tick(1.4, Level::kHigh), Level::kHigh);
}

TEST_F(LevelMachineTest, HardSafetyFloorBlocksDeescalation) {
  start_at(Level::kHigh);
  // Overall pressure under every exit, but the floor holds the level.
  EXPECT_EQ(ticks(100, 0.0), Level::kNormal);  // without a floor it falls
  start_at(Level::kHigh);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(tick(0.0, Level::kHigh), Level::kHigh);
}

TEST_F(LevelMachineTest, LevelForMapsPressureToHighestEnterMet) {
  EXPECT_EQ(machine_.level_for(0.0), Level::kNormal);
  EXPECT_EQ(machine_.level_for(just_below(1.0)), Level::kNormal);
  EXPECT_EQ(machine_.level_for(1.0), Level::kElevated);
  EXPECT_EQ(machine_.level_for(1.3), Level::kHigh);
  EXPECT_EQ(machine_.level_for(2.0), Level::kCritical);
  EXPECT_EQ(machine_.level_for(50.0), Level::kCritical);
}

TEST_F(LevelMachineTest, HoldKeepsTheLevelAndForgetsPartialEvidence) {
  EXPECT_EQ(tick(1.1), Level::kNormal);  // half of the dwell
  machine_.hold();
  EXPECT_EQ(tick(1.1), Level::kNormal);  // dwell restarted
  EXPECT_EQ(tick(1.1), Level::kElevated);

  EXPECT_EQ(ticks(20, 0.1), Level::kElevated);  // exit timer at 2 s
  machine_.hold();
  EXPECT_EQ(ticks(20, 0.1), Level::kElevated);  // timer restarted
  EXPECT_EQ(ticks(11, 0.1), Level::kNormal);
}

TEST_F(LevelMachineTest, ResetJumpsDirectly) {
  start_at(Level::kCritical);
  machine_.reset(Level::kNormal);
  EXPECT_EQ(machine_.level(), Level::kNormal);
}

}  // namespace
}  // namespace edgeshed::law
