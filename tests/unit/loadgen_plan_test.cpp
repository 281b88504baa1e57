// loadgen's schedule and option values: durations, ramps, class mixes, the
// arrival times and the class picker.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tools/loadgen_plan.h"

namespace edgeshed::loadgen {
namespace {

TEST(LoadgenParseDuration, Units) {
  EXPECT_DOUBLE_EQ(*parse_duration_s("5s"), 5);
  EXPECT_DOUBLE_EQ(*parse_duration_s("500ms"), 0.5);
  EXPECT_DOUBLE_EQ(*parse_duration_s("2m"), 120);
  EXPECT_DOUBLE_EQ(*parse_duration_s("2.5"), 2.5);
  EXPECT_DOUBLE_EQ(*parse_duration_s(" 10s "), 10);
  for (const char* bad : {"", "s", "-1s", "5x", "1e999s", "nan", "inf"}) {
    EXPECT_FALSE(parse_duration_s(bad)) << bad;
  }
}

TEST(LoadgenParseRamp, MultiplesOfCapacityAndAbsoluteRates) {
  auto phases = parse_ramp("0.5x:5s,3x:10s,0.5x:10s", 500.0);
  ASSERT_TRUE(phases) << phases.error;
  ASSERT_EQ(phases->size(), 3u);
  EXPECT_DOUBLE_EQ((*phases)[0].rate, 250);
  EXPECT_DOUBLE_EQ((*phases)[0].duration_s, 5);
  EXPECT_DOUBLE_EQ((*phases)[1].rate, 1500);
  EXPECT_EQ((*phases)[1].label, "3x");
  EXPECT_DOUBLE_EQ((*phases)[2].duration_s, 10);

  auto absolute = parse_ramp("800:2s, 0:500ms", std::nullopt);
  ASSERT_TRUE(absolute) << absolute.error;
  EXPECT_DOUBLE_EQ((*absolute)[0].rate, 800);
  EXPECT_DOUBLE_EQ((*absolute)[1].rate, 0);
  EXPECT_DOUBLE_EQ((*absolute)[1].duration_s, 0.5);
}

TEST(LoadgenParseRamp, Errors) {
  EXPECT_NE(parse_ramp("1x:5s", std::nullopt).error.find("needs --capacity"), std::string::npos);
  EXPECT_NE(parse_ramp("1x5s", 100.0).error.find("RATE:DURATION"), std::string::npos);
  EXPECT_NE(parse_ramp("fast:5s", 100.0).error.find("not a number"), std::string::npos);
  EXPECT_NE(parse_ramp("-1x:5s", 100.0).error.find("not a number"), std::string::npos);
  EXPECT_NE(parse_ramp("1x:0s", 100.0).error.find("more than 0"), std::string::npos);
  EXPECT_FALSE(parse_ramp("1x:5s,", 100.0));
}

TEST(LoadgenParseClassMix, SharesAndErrors) {
  auto mix = parse_class_mix("critical=0.1,normal=0.6,background=0.3");
  ASSERT_TRUE(mix) << mix.error;
  ASSERT_EQ(mix->size(), 3u);
  EXPECT_EQ((*mix)[0].name, "critical");
  EXPECT_DOUBLE_EQ((*mix)[2].share, 0.3);
  EXPECT_TRUE(parse_class_mix("a=1,b=0"));
  EXPECT_NE(parse_class_mix("a=0,b=0").error.find("zero"), std::string::npos);
  EXPECT_NE(parse_class_mix("a=1,a=2").error.find("twice"), std::string::npos);
  EXPECT_NE(parse_class_mix("a=-1").error.find(">= 0"), std::string::npos);
  EXPECT_NE(parse_class_mix("a").error.find("NAME=VALUE"), std::string::npos);
  EXPECT_NE(parse_class_mix("a b=1").error.find("class name"), std::string::npos);
}

TEST(LoadgenParseNameValue, PortsAndNames) {
  auto nv = parse_name_value("critical=443");
  ASSERT_TRUE(nv);
  EXPECT_EQ(nv->first, "critical");
  EXPECT_EQ(nv->second, "443");
  EXPECT_FALSE(parse_name_value("=443"));
  EXPECT_FALSE(parse_name_value("critical="));
  EXPECT_EQ(*parse_port("443"), 443);
  EXPECT_EQ(*parse_port("65535"), 65535);
  for (const char* bad : {"0", "65536", "80x", "", "-1"}) EXPECT_FALSE(parse_port(bad)) << bad;
}

std::vector<Arrival> drain(ArrivalSchedule s) {
  std::vector<Arrival> all;
  while (auto a = s.next()) all.push_back(*a);
  return all;
}

TEST(LoadgenSchedule, FixedRateIsEvenlySpaced) {
  auto all = drain(ArrivalSchedule({{800, 2.5, "800"}}, false, 1));
  ASSERT_EQ(all.size(), 2000u);  // 800/s for 2.5 s
  EXPECT_DOUBLE_EQ(all[0].t_s, 0);
  EXPECT_DOUBLE_EQ(all[1].t_s, 0.00125);
  EXPECT_DOUBLE_EQ(all[1999].t_s, 1999 / 800.0);  // computed, not accumulated
}

TEST(LoadgenSchedule, RampPhasesInOrder) {
  // 0.5x:1s,3x:1s,0.5x:2s at capacity 100; the 0 phase offers nothing.
  auto all = drain(
      ArrivalSchedule({{50, 1, "0.5x"}, {300, 1, "3x"}, {0, 1, "0"}, {50, 2, "0.5x"}}, false, 1));
  std::vector<int> per_phase(4, 0);
  for (const Arrival& a : all) ++per_phase[a.phase];
  EXPECT_EQ(per_phase, (std::vector<int>{50, 300, 0, 100}));
  EXPECT_DOUBLE_EQ(all[50].t_s, 1.0);   // the second phase starts on its boundary
  EXPECT_DOUBLE_EQ(all[350].t_s, 3.0);  // after the empty phase
  for (size_t i = 1; i < all.size(); ++i) EXPECT_LT(all[i - 1].t_s, all[i].t_s);
}

TEST(LoadgenSchedule, PoissonHasTheRateOnAverage) {
  auto all = drain(ArrivalSchedule({{1000, 20, "1000"}}, true, 42));
  // 20000 expected; the standard deviation of a Poisson count is sqrt(20000) ~ 141.
  EXPECT_NEAR(static_cast<double>(all.size()), 20000, 5 * 141);
  double sum_sq = 0, mean_gap = 20.0 / static_cast<double>(all.size());
  for (size_t i = 1; i < all.size(); ++i) {
    double gap = all[i].t_s - all[i - 1].t_s;
    sum_sq += (gap - mean_gap) * (gap - mean_gap);
  }
  // Exponential gaps: standard deviation equals the mean (fixed gaps would give 0).
  double sd = std::sqrt(sum_sq / static_cast<double>(all.size() - 1));
  EXPECT_NEAR(sd / mean_gap, 1.0, 0.05);
  EXPECT_LT(all.back().t_s, 20.0);
}

TEST(LoadgenSchedule, BurstAllAtZero) {
  auto all = drain(ArrivalSchedule::burst(3));
  ASSERT_EQ(all.size(), 3u);
  for (const Arrival& a : all) EXPECT_EQ(a.t_s, 0);
}

TEST(LoadgenClassPicker, ExactSharesInterleaved) {
  ClassPicker picker({0.1, 0.6, 0.3});
  std::vector<int> counts(3, 0), first_ten(3, 0);
  for (int i = 0; i < 1000; ++i) {
    size_t c = picker.next();
    ++counts[c];
    if (i < 10) ++first_ten[c];
  }
  EXPECT_EQ(counts, (std::vector<int>{100, 600, 300}));
  EXPECT_EQ(first_ten, (std::vector<int>{1, 6, 3}));  // already in proportion after 10
}

TEST(LoadgenClassPicker, WeightsAreNormalisedAndZeroNeverPicked) {
  ClassPicker picker({1, 0, 3});
  std::vector<int> counts(3, 0);
  for (int i = 0; i < 400; ++i) ++counts[picker.next()];
  EXPECT_EQ(counts, (std::vector<int>{100, 0, 300}));
}

}  // namespace
}  // namespace edgeshed::loadgen
