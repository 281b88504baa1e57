// The signals that need nothing from the service: the kernel-measured
// latency of the protected ports, and how full the adaptive limit is.
#include <gtest/gtest.h>

#include <string>

#include "common/expect_refused.h"
#include "config/config.h"
#include "signals/kernel_latency_signal.h"
#include "signals/limit_signal.h"
#include "signals/signal_kinds.h"
#include "signals/signal_set.h"

namespace edgeshed::signals {
namespace {

using std::chrono::seconds;

// count, p50, p90, p99, mean
LatencyStats stats(uint64_t count, double p50, double p90, double p99, double mean) {
  LatencyStats s;
  s.count = count;
  s.p50_s = p50;
  s.p90_s = p90;
  s.p99_s = p99;
  s.mean_s = mean;
  return s;
}

LatencySnapshot two_ports() {
  LatencySnapshot snap;
  snap[80].response = stats(100, 0.020, 0.030, 0.045, 0.022);
  snap[80].connection = stats(100, 0.021, 0.031, 0.050, 0.023);
  snap[443].response = stats(10, 0.010, 0.060, 0.090, 0.015);
  snap[kAllPorts].response = stats(110, 0.019, 0.040, 0.089, 0.021);
  return snap;
}

TEST(KernelLatencySignal, WorstPortUnlessOneIsNamed) {
  const LatencySnapshot snap = two_ports();
  using M = LatencyMeasure;
  using S = LatencyStatistic;
  EXPECT_DOUBLE_EQ(KernelLatencySignal::value_of(snap, M::kResponse, S::kP99, std::nullopt), 0.090);
  EXPECT_DOUBLE_EQ(KernelLatencySignal::value_of(snap, M::kResponse, S::kP50, std::nullopt), 0.020);
  EXPECT_DOUBLE_EQ(KernelLatencySignal::value_of(snap, M::kResponse, S::kP99, 80), 0.045);
  EXPECT_DOUBLE_EQ(KernelLatencySignal::value_of(snap, M::kConnection, S::kMean, 80), 0.023);
  // The all-ports aggregate is not a port of its own.
  EXPECT_DOUBLE_EQ(KernelLatencySignal::value_of(snap, M::kResponse, S::kP90, std::nullopt), 0.060);
}

TEST(KernelLatencySignal, NoSampleReadsZero) {
  LatencySnapshot snap;
  snap[80] = {};
  using M = LatencyMeasure;
  using S = LatencyStatistic;
  EXPECT_DOUBLE_EQ(KernelLatencySignal::value_of(snap, M::kResponse, S::kP99, std::nullopt), 0.0);
  EXPECT_DOUBLE_EQ(KernelLatencySignal::value_of(snap, M::kResponse, S::kP99, 8080), 0.0);
}

// t.toml: a kernel_latency signal "rt" with these keys besides.
Result<config::Config> rt_signal(const std::string& keys) {
  return signals::parse_config("[[signal]]\nname = \"rt\"\nkind = \"kernel_latency\"\n" + keys,
                               "t.toml");
}

TEST(KernelLatencySignal, BuiltFromConfigReadsThroughTheReader) {
  auto cfg = rt_signal("statistic = \"p90\"\nport = 443\ntarget = 0.05\n");
  ASSERT_TRUE(cfg) << cfg.error().message;
  SignalSet::DataplaneReaders readers;
  readers.latency = [] { return Result<LatencySnapshot>(two_ports()); };
  auto set = SignalSet::build(cfg->signals, readers);
  ASSERT_TRUE(set) << set.error().message;
  auto r = set->sample(seconds(1));
  EXPECT_DOUBLE_EQ(r[0].value, 0.060);
  EXPECT_FALSE(r[0].stale);
}

TEST(KernelLatencySignal, UnknownStatisticIsRefusedWithItsPlace) {
  auto cfg = rt_signal("statistic = \"p95\"\ntarget = 0.05\n");
  ASSERT_TRUE(cfg) << cfg.error().message;
  testing::expect_refused(SignalSet::build(cfg->signals, {}), {"t.toml:", "statistic"});
}

TEST(LimitSignal, InflightOverTheLimit) {
  LimitSignal full([] { return Result<LimitUse>(LimitUse{12, 10}); });
  auto s = full.sample(seconds(2));
  ASSERT_TRUE(s);
  EXPECT_DOUBLE_EQ(s->value, 1.2);
  // Keep-alive connections far over the limit read high, never critical.
  LimitSignal flooded([] { return Result<LimitUse>(LimitUse{100, 10}); });
  EXPECT_DOUBLE_EQ(flooded.sample(seconds(2))->value, LimitSignal::kCeiling);
  LimitSignal none([] { return Result<LimitUse>(LimitUse{15, 0}); });
  EXPECT_FALSE(none.sample(seconds(2)));
}

TEST(LimitSignal, DefaultSignalOfAPortOnlyConfigBuilds) {
  auto cfg = signals::parse_config("[[port]]\nport = 80\n", "t.toml");
  ASSERT_TRUE(cfg) << cfg.error().message;
  SignalSet::DataplaneReaders readers;
  readers.limit_use = [] { return Result<LimitUse>(LimitUse{8, 10}); };
  auto set = SignalSet::build(cfg->signals, readers);
  ASSERT_TRUE(set) << set.error().message;
  auto r = set->sample(seconds(1));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].name, "limit");
  EXPECT_DOUBLE_EQ(r[0].value, 0.8);
}

}  // namespace
}  // namespace edgeshed::signals
