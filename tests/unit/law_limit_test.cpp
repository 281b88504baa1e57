#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <optional>

#include "law/aimd_limit.h"
#include "law/gradient_limit.h"
#include "law/limit_algorithm.h"
#include "law/static_limit.h"

namespace edgeshed::law {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;

// Produces one sample per 100 ms tick.
class Samples {
 public:
  LimitSample next(std::optional<double> latency, uint32_t inflight, uint64_t sheds = 0) {
    now_ += milliseconds(100);
    LimitSample sample;
    sample.latency_seconds = latency;
    sample.inflight = inflight;
    sample.sheds = sheds;
    sample.now = now_;
    return sample;
  }

 private:
  nanoseconds now_{seconds(1)};
};

// --- static

TEST(StaticLimitTest, NeverMoves) {
  StaticLimit limit(StaticLimitConfig{42});
  Samples samples;
  EXPECT_EQ(limit.limit(), 42u);
  EXPECT_EQ(limit.update(samples.next(10.0, 1000, 1000)), 42u);
  EXPECT_EQ(limit.update(samples.next(0.001, 42)), 42u);
  EXPECT_EQ(limit.update(samples.next(std::nullopt, 0)), 42u);
}

// --- aimd

class AimdLimitTest : public ::testing::Test {
 protected:
  AimdLimitTest() {
    config_.initial = 20;
    config_.min = 4;
    config_.max = 25;
    config_.latency_threshold_seconds = 0.1;
  }
  AimdLimitConfig config_;
  Samples samples_;
};

TEST_F(AimdLimitTest, DefaultsAreDocumentedValues) {
  const AimdLimitConfig defaults;
  EXPECT_EQ(defaults.backoff, 0.9);
  EXPECT_EQ(defaults.increase, 1u);
  EXPECT_EQ(defaults.initial, 20u);
  EXPECT_EQ(defaults.min, 4u);
  EXPECT_EQ(defaults.max, 1000u);
}

TEST_F(AimdLimitTest, AddsOnePerFastTick) {
  AimdLimit limit(config_);
  EXPECT_EQ(limit.update(samples_.next(0.05, 20)), 21u);
  EXPECT_EQ(limit.update(samples_.next(0.05, 21)), 22u);
}

TEST_F(AimdLimitTest, LatencyAtThresholdIsNotCongestion) {
  AimdLimit limit(config_);
  EXPECT_EQ(limit.update(samples_.next(0.1, 20)), 21u);
}

TEST_F(AimdLimitTest, BacksOffWhenLatencyIsOverThreshold) {
  AimdLimit limit(config_);
  EXPECT_EQ(limit.update(samples_.next(0.11, 20)), 18u);  // floor(20 * 0.9)
}

TEST_F(AimdLimitTest, SlowSampleOverTheLimitIsNotCongestion) {
  AimdLimit limit(config_);
  EXPECT_EQ(limit.update(samples_.next(1.0, 21)), 20u);  // limit not in force: hold
}

TEST_F(AimdLimitTest, ShedsCountAsCongestion) {
  AimdLimit limit(config_);
  EXPECT_EQ(limit.update(samples_.next(0.01, 20, /*sheds=*/1)), 18u);
  EXPECT_EQ(limit.update(samples_.next(std::nullopt, 0, /*sheds=*/5)), 16u);
}

TEST_F(AimdLimitTest, StaysWithinMinAndMax) {
  AimdLimit limit(config_);
  for (int i = 0; i < 50; ++i) limit.update(samples_.next(0.01, 1000));
  EXPECT_EQ(limit.limit(), 25u);
  for (int i = 0; i < 50; ++i) limit.update(samples_.next(1.0, limit.limit()));
  EXPECT_EQ(limit.limit(), 4u);
}

TEST_F(AimdLimitTest, UntestedLimitDoesNotGrow) {
  AimdLimit limit(config_);
  EXPECT_EQ(limit.update(samples_.next(0.01, 9)), 20u);   // under half the limit
  EXPECT_EQ(limit.update(samples_.next(0.01, 10)), 21u);  // half: tested
}

TEST_F(AimdLimitTest, NoLatencyAndNoShedsHolds) {
  AimdLimit limit(config_);
  EXPECT_EQ(limit.update(samples_.next(std::nullopt, 20)), 20u);
}

// --- gradient

// Smoothing and rate limits out of the way, so that one update shows the law.
GradientLimitConfig unsmoothed() {
  GradientLimitConfig config;
  config.initial = 100;
  config.min = 4;
  config.max = 1000;
  config.tolerance = 0.15;
  config.smoothing = 1.0;
  config.max_increase_per_tick = 10.0;
  config.max_decrease_per_tick = 0.01;
  return config;
}

constexpr double kBaseline = 0.100;

class GradientLimitTest : public ::testing::Test {
 protected:
  // Teaches the baseline with a tick that cannot move the limit (idle).
  GradientLimit with_baseline(const GradientLimitConfig& config) {
    GradientLimit limit(config);
    limit.update(samples_.next(kBaseline, /*inflight=*/0));
    return limit;
  }
  Samples samples_;
};

TEST_F(GradientLimitTest, DefaultsAreDocumentedValues) {
  const GradientLimitConfig defaults;
  EXPECT_EQ(defaults.initial, 20u);
  EXPECT_EQ(defaults.min, 4u);
  EXPECT_EQ(defaults.max, 1000u);
  EXPECT_EQ(defaults.tolerance, 0.15);
  EXPECT_EQ(defaults.smoothing, 0.2);
  EXPECT_EQ(GradientLimit(defaults).limit(), 20u);
}

TEST_F(GradientLimitTest, FirstSampleSetsTheBaseline) {
  GradientLimit limit = with_baseline(unsmoothed());
  ASSERT_TRUE(limit.baseline_seconds().has_value());
  EXPECT_DOUBLE_EQ(*limit.baseline_seconds(), kBaseline);
  EXPECT_EQ(limit.limit(), 100u);  // idle tick: limit untouched
}

TEST_F(GradientLimitTest, UncongestedRisesByGradientPlusSqrtHeadroom) {
  GradientLimit limit = with_baseline(unsmoothed());
  // gradient = 0.1 * 1.15 / 0.1 = 1.15; 100 * 1.15 + sqrt(100) = 125.
  EXPECT_EQ(limit.update(samples_.next(kBaseline, 100)), 125u);
}

TEST_F(GradientLimitTest, AtTheBandEdgeOnlyHeadroomIsAdded) {
  GradientLimit limit = with_baseline(unsmoothed());
  EXPECT_EQ(limit.update(samples_.next(kBaseline * 1.15, 100)), 110u);  // gradient 1
}

TEST_F(GradientLimitTest, CongestedFallsByTheGradientWithoutHeadroom) {
  GradientLimit limit = with_baseline(unsmoothed());
  // gradient = 0.115 / 0.184 = 0.625; no headroom when congested.
  EXPECT_EQ(limit.update(samples_.next(0.184, 100)), 62u);
}

TEST_F(GradientLimitTest, ShedsCountAsCongestion) {
  GradientLimit with_sheds = with_baseline(unsmoothed());
  GradientLimit without_sheds = with_baseline(unsmoothed());
  // Fast latency, but sheds: no headroom. The gradient still applies.
  EXPECT_EQ(with_sheds.update(samples_.next(kBaseline, 100, /*sheds=*/3)), 115u);
  EXPECT_EQ(without_sheds.update(samples_.next(kBaseline, 100)), 125u);
  // At the band edge sheds hold the limit where it is.
  EXPECT_EQ(with_sheds.update(samples_.next(kBaseline * 1.15, 115, 3)), 115u);
}

TEST_F(GradientLimitTest, GradientIsClampedAtOneHalf) {
  GradientLimit limit = with_baseline(unsmoothed());
  EXPECT_EQ(limit.update(samples_.next(10.0, 100)), 50u);  // raw gradient 0.0115
}

TEST_F(GradientLimitTest, GradientReachesTwoAtMost) {
  GradientLimitConfig config = unsmoothed();
  config.tolerance = 1.0;  // gradient = 2 * baseline / sample, at most 2 since baseline <= sample
  GradientLimit limit = with_baseline(config);
  EXPECT_EQ(limit.update(samples_.next(kBaseline, 100)), 210u);  // 100 * 2 + 10
}

TEST_F(GradientLimitTest, NeverBelowMin) {
  GradientLimit limit = with_baseline(unsmoothed());
  for (int i = 0; i < 30; ++i) limit.update(samples_.next(1.0, limit.limit()));
  EXPECT_EQ(limit.limit(), 4u);
}

TEST_F(GradientLimitTest, NeverAboveMax) {
  GradientLimit limit = with_baseline(unsmoothed());
  for (int i = 0; i < 30; ++i) limit.update(samples_.next(kBaseline, 1000));
  EXPECT_EQ(limit.limit(), 1000u);
}

TEST_F(GradientLimitTest, RiseIsRateLimited) {
  GradientLimitConfig config = unsmoothed();
  config.max_increase_per_tick = 1.1;
  GradientLimit limit = with_baseline(config);
  EXPECT_EQ(limit.update(samples_.next(kBaseline, 100)), 110u);  // not 125
}

TEST_F(GradientLimitTest, FallIsRateLimited) {
  GradientLimitConfig config = unsmoothed();
  config.max_decrease_per_tick = 0.8;
  GradientLimit limit = with_baseline(config);
  EXPECT_EQ(limit.update(samples_.next(10.0, 100)), 80u);  // not 50
}

TEST_F(GradientLimitTest, SmoothingMovesPartOfTheWay) {
  GradientLimitConfig config = unsmoothed();
  config.smoothing = 0.2;
  GradientLimit limit = with_baseline(config);
  // Target 50: 100 * 0.8 + 50 * 0.2 = 90.
  EXPECT_EQ(limit.update(samples_.next(10.0, 100)), 90u);
}

TEST_F(GradientLimitTest, UntestedLimitHoldsButTeachesTheBaseline) {
  GradientLimit limit = with_baseline(unsmoothed());
  EXPECT_EQ(limit.update(samples_.next(10.0, 49)), 100u);   // slow, but in-flight < half
  EXPECT_EQ(limit.update(samples_.next(0.001, 49)), 100u);  // fast, same
  EXPECT_DOUBLE_EQ(*limit.baseline_seconds(), 0.001);
}

TEST_F(GradientLimitTest, SlowSampleOverTheLimitDoesNotLowerIt) {
  GradientLimit limit = with_baseline(unsmoothed());
  // 500 in flight against a limit of 100: the limit was not in force.
  EXPECT_EQ(limit.update(samples_.next(10.0, 500)), 100u);
  // A fast one still proves it too low.
  EXPECT_EQ(limit.update(samples_.next(kBaseline, 500)), 125u);
}

TEST_F(GradientLimitTest, NoSampleHolds) {
  GradientLimit limit = with_baseline(unsmoothed());
  EXPECT_EQ(limit.update(samples_.next(std::nullopt, 100, 50)), 100u);
}

// --- gradient baseline

TEST_F(GradientLimitTest, BaselineResetsDownAtOnce) {
  GradientLimit limit = with_baseline(unsmoothed());
  limit.update(samples_.next(0.040, 0));
  EXPECT_DOUBLE_EQ(*limit.baseline_seconds(), 0.040);
}

TEST_F(GradientLimitTest, BaselineIgnoresSamplesInsideTheBand) {
  GradientLimit limit = with_baseline(unsmoothed());
  for (int i = 0; i < 1000; ++i) limit.update(samples_.next(kBaseline * 1.15, 0));
  EXPECT_DOUBLE_EQ(*limit.baseline_seconds(), kBaseline);
}

TEST_F(GradientLimitTest, BaselineRisesOnlyAfterRiseAfterAboveTheBand) {
  GradientLimitConfig config = unsmoothed();  // baseline_rise_after 2 s, smoothing 0.01
  GradientLimit limit = with_baseline(config);
  for (int i = 0; i < 20; ++i) limit.update(samples_.next(0.150, 0));  // 0 .. 1.9 s
  EXPECT_DOUBLE_EQ(*limit.baseline_seconds(), kBaseline);
  limit.update(samples_.next(0.150, 0));  // 2.0 s
  EXPECT_DOUBLE_EQ(*limit.baseline_seconds(), kBaseline + 0.01 * (0.150 - kBaseline));
}

TEST_F(GradientLimitTest, BaselineRiseCountsFromTwiceTheBaselineAtMost) {
  GradientLimitConfig config = unsmoothed();
  config.baseline_rise_after = nanoseconds(0);
  GradientLimit limit = with_baseline(config);
  limit.update(samples_.next(5.0, 0));  // a burst of queueing, 50x the baseline
  EXPECT_DOUBLE_EQ(*limit.baseline_seconds(), kBaseline + 0.01 * kBaseline);
}

TEST_F(GradientLimitTest, BreakInTheBandRestartsTheRiseDelay) {
  GradientLimit limit = with_baseline(unsmoothed());
  for (int i = 0; i < 15; ++i) limit.update(samples_.next(0.150, 0));
  limit.update(samples_.next(kBaseline, 0));  // back in the band
  for (int i = 0; i < 15; ++i) limit.update(samples_.next(0.150, 0));
  limit.update(samples_.next(std::nullopt, 0));  // a gap breaks it too
  for (int i = 0; i < 15; ++i) limit.update(samples_.next(0.150, 0));
  EXPECT_DOUBLE_EQ(*limit.baseline_seconds(), kBaseline);
}

// Under sustained overload the law never pins the limit low to measure a
// no-load latency: with latency at the baseline it only ever holds or grows.
TEST_F(GradientLimitTest, BaselineIsNotMeasuredByPinningTheLimitLow) {
  GradientLimit limit{GradientLimitConfig{}};
  uint32_t previous = limit.limit();
  for (int i = 0; i < 3000; ++i) {
    const uint32_t next = limit.update(samples_.next(0.020, previous, /*sheds=*/10));
    ASSERT_GE(next, previous) << "tick " << i;
    previous = next;
  }
  EXPECT_EQ(previous, 1000u);
}

// A service that really became twice as slow: the limit falls at first, then
// the baseline follows the new latency and the limit grows back, even though
// the cap sheds all along.
TEST_F(GradientLimitTest, RealSlowdownIsAcceptedAndTheLimitRecovers) {
  GradientLimit limit{GradientLimitConfig{}};
  for (int i = 0; i < 10; ++i) limit.update(samples_.next(0.020, limit.limit(), 10));
  const uint32_t before = limit.limit();
  uint32_t lowest = before;
  for (int i = 0; i < 600; ++i) {
    lowest = std::min(lowest, limit.update(samples_.next(0.040, limit.limit(), 10)));
  }
  EXPECT_LT(lowest, before);
  EXPECT_GT(*limit.baseline_seconds(), 0.040 / 1.15);
  EXPECT_GT(limit.limit(), 2 * lowest);
}

// --- factory

TEST(MakeLimitAlgorithmTest, BuildsTheChosenAlgorithm) {
  LimitConfig config;
  config.static_limit.limit = 7;
  config.aimd.initial = 8;
  config.gradient.initial = 9;
  config.algorithm = LimitAlgorithmKind::kStatic;
  EXPECT_EQ(make_limit_algorithm(config)->limit(), 7u);
  config.algorithm = LimitAlgorithmKind::kAimd;
  EXPECT_EQ(make_limit_algorithm(config)->limit(), 8u);
  config.algorithm = LimitAlgorithmKind::kGradient;
  EXPECT_EQ(make_limit_algorithm(config)->limit(), 9u);
  EXPECT_EQ(LimitConfig{}.algorithm, LimitAlgorithmKind::kCapacity);
}

}  // namespace
}  // namespace edgeshed::law
