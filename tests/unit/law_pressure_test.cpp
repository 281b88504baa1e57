#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "law/pressure.h"

namespace edgeshed::law {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

SignalReading reading(std::string name, double value, double target, bool hard_safety = false,
                      bool stale = false) {
  return SignalReading{std::move(name), value, target, hard_safety, stale};
}

TEST(PressureTest, PressureIsValueOverTarget) {
  const PressureSummary summary = summarize_pressure({reading("queue", 30.0, 20.0)});
  EXPECT_DOUBLE_EQ(summary.pressure, 1.5);
  EXPECT_THAT(summary.drivers, ElementsAre("queue"));
  EXPECT_FALSE(summary.all_stale);
}

TEST(PressureTest, OverallPressureIsTheMaxAndNamesItsDriver) {
  const PressureSummary summary = summarize_pressure(
      {reading("cpu", 0.9, 1.0), reading("queue", 12.0, 10.0), reading("latency", 0.05, 0.1)});
  EXPECT_DOUBLE_EQ(summary.pressure, 1.2);
  EXPECT_THAT(summary.drivers, ElementsAre("queue"));
}

TEST(PressureTest, TiesNameEverySignalAtTheMax) {
  const PressureSummary summary =
      summarize_pressure({reading("a", 2.0, 1.0), reading("b", 1.0, 1.0), reading("c", 4.0, 2.0)});
  EXPECT_DOUBLE_EQ(summary.pressure, 2.0);
  EXPECT_THAT(summary.drivers, ElementsAre("a", "c"));
}

TEST(PressureTest, StaleSignalsAreIgnored) {
  const PressureSummary summary = summarize_pressure(
      {reading("stale_high", 50.0, 1.0, false, /*stale=*/true), reading("fresh", 0.5, 1.0)});
  EXPECT_DOUBLE_EQ(summary.pressure, 0.5);
  EXPECT_THAT(summary.drivers, ElementsAre("fresh"));
}

TEST(PressureTest, AllStaleIsReported) {
  const PressureSummary summary =
      summarize_pressure({reading("a", 5.0, 1.0, false, true), reading("b", 5.0, 1.0, true, true)});
  EXPECT_TRUE(summary.all_stale);
  EXPECT_DOUBLE_EQ(summary.pressure, 0.0);
  EXPECT_THAT(summary.drivers, IsEmpty());
  EXPECT_DOUBLE_EQ(summary.hard_safety_pressure, 0.0);
}

TEST(PressureTest, NoSignalsIsAllStale) { EXPECT_TRUE(summarize_pressure({}).all_stale); }

TEST(PressureTest, UnusableReadingsAreTreatedAsStale) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const PressureSummary summary =
      summarize_pressure({reading("nan", nan, 1.0), reading("inf", inf, 1.0),
                          reading("zero_target", 1.0, 0.0), reading("negative_target", 1.0, -1.0)});
  EXPECT_TRUE(summary.all_stale);
}

TEST(PressureTest, NegativeValueIsNoPressure) {
  const PressureSummary summary = summarize_pressure({reading("counter", -5.0, 1.0)});
  EXPECT_FALSE(summary.all_stale);
  EXPECT_DOUBLE_EQ(summary.pressure, 0.0);
}

TEST(PressureTest, HardSafetyPressureIsTrackedSeparately) {
  const PressureSummary summary = summarize_pressure(
      {reading("memory", 1.4, 1.0, /*hard_safety=*/true), reading("queue", 3.0, 1.0),
       reading("stale_memory", 9.0, 1.0, true, /*stale=*/true)});
  EXPECT_DOUBLE_EQ(summary.pressure, 3.0);
  EXPECT_DOUBLE_EQ(summary.hard_safety_pressure, 1.4);
  EXPECT_THAT(summary.hard_safety_drivers, ElementsAre("memory"));
}

}  // namespace
}  // namespace edgeshed::law
