// law::IdleReclaim: how many idle connections to reclaim (the level, each
// class's excess over its cap, a batch, in shed order), which (the longest
// idle, each past min_idle) and when (one batch an interval, with jitter).
#include "law/idle_reclaim.h"

#include <gtest/gtest.h>

#include <chrono>
#include <vector>

#include "law/policy.h"

namespace edgeshed::law {
namespace {

using namespace std::chrono_literals;

constexpr size_t kBackground = index_of(TrafficClass::kBackground);
constexpr size_t kNormal = index_of(TrafficClass::kNormal);
constexpr size_t kCritical = index_of(TrafficClass::kCritical);

std::array<ClassConnections, kNumClasses> open_classes() {
  std::array<ClassConnections, kNumClasses> classes{};
  for (auto& c : classes) c = {0, kUnlimited};
  return classes;
}

class IdleReclaimTest : public ::testing::Test {
 protected:
  double draw_ = 0.5;  // the jitter's draw: 0.5 is none
  IdleReclaim reclaim_{IdleReclaimConfig{}, [this] { return draw_; }};
};

TEST_F(IdleReclaimTest, NothingAtTheLevelNormal) {
  auto classes = open_classes();
  classes[kNormal] = {100, 10};
  EXPECT_EQ(reclaim_.due(0ns, Level::kNormal, classes), ClassQuota{});
  EXPECT_EQ(reclaim_.due(0ns, Level::kElevated, classes)[kNormal], 32u);
}

TEST_F(IdleReclaimTest, NothingWhileTheLimitBindsNowhere) {
  auto classes = open_classes();
  classes[kNormal] = {100, kUnlimited};
  EXPECT_EQ(reclaim_.due(0ns, Level::kCritical, classes), ClassQuota{});
}

TEST_F(IdleReclaimTest, OnlyTheExcessOverTheCap) {
  auto classes = open_classes();
  classes[kNormal] = {10, 10};
  EXPECT_EQ(reclaim_.due(0ns, Level::kHigh, classes), ClassQuota{});
  classes[kNormal] = {15, 10};
  EXPECT_EQ(reclaim_.due(0ns, Level::kHigh, classes)[kNormal], 5u);
}

TEST_F(IdleReclaimTest, ABatchAtMostBackgroundFirstCriticalLast) {
  auto classes = open_classes();
  classes[kCritical] = {30, 10};
  classes[kNormal] = {30, 10};
  classes[kBackground] = {25, 10};
  const ClassQuota q = reclaim_.due(0ns, Level::kElevated, classes);
  EXPECT_EQ(q[kBackground], 15u);
  EXPECT_EQ(q[kNormal], 17u);
  EXPECT_EQ(q[kCritical], 0u);
}

TEST_F(IdleReclaimTest, TheLongestIdleFirstEachPastMinIdle) {
  const std::vector<IdleCandidate> idle = {
      {1, 2s, TrafficClass::kNormal},    {2, 30s, TrafficClass::kNormal},
      {3, 500ms, TrafficClass::kNormal},  // a closed-loop client between two requests
      {4, 10s, TrafficClass::kNormal},   {5, 60s, TrafficClass::kBackground},
      {6, 90s, TrafficClass::kCritical},  // its class has no quota
  };
  ClassQuota quota{};
  quota[kNormal] = 2;
  quota[kBackground] = 5;
  EXPECT_EQ(reclaim_.choose(idle, quota), (std::vector<uint64_t>{5, 2, 4}));
  quota[kNormal] = 10;
  EXPECT_EQ(reclaim_.choose(idle, quota), (std::vector<uint64_t>{5, 2, 4, 1}));
}

TEST_F(IdleReclaimTest, OneBatchAnIntervalWithJitter) {
  auto classes = open_classes();
  classes[kNormal] = {100, 10};
  reclaim_.ran(0ns);
  EXPECT_EQ(reclaim_.due(999ms, Level::kHigh, classes), ClassQuota{});
  EXPECT_EQ(reclaim_.due(1s, Level::kHigh, classes)[kNormal], 32u);
  // The interval varies by 20% either way with the draw.
  draw_ = 0.0;
  reclaim_.ran(1s);
  EXPECT_EQ(reclaim_.due(1799ms, Level::kHigh, classes), ClassQuota{});
  EXPECT_EQ(reclaim_.due(1800ms, Level::kHigh, classes)[kNormal], 32u);
  draw_ = 0.999;
  reclaim_.ran(2s);
  EXPECT_EQ(reclaim_.due(3199ms, Level::kHigh, classes), ClassQuota{});
  EXPECT_EQ(reclaim_.due(3200ms, Level::kHigh, classes)[kNormal], 32u);
}

}  // namespace
}  // namespace edgeshed::law
