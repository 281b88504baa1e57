// The latency histograms' bucket math (abi.h, shared with the data plane)
// and the windowed quantiles computed from cumulative snapshots.
#include "common/latency_window.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <random>
#include <vector>

namespace edgeshed::signals {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;

constexpr uint64_t kUnitNs = 1ull << EDGESHED_LATENCY_UNIT_SHIFT;
constexpr uint64_t kMs = 1000000;
constexpr uint16_t kPort = 8080;

// Whether ns lies in its bucket's bounds (the last bucket is open above).
void expect_in_bucket(uint64_t ns) {
  const uint32_t b = edgeshed_latency_bucket(ns);
  ASSERT_LT(b, EDGESHED_LATENCY_BUCKETS) << ns;
  EXPECT_LE(edgeshed_latency_bucket_lower_ns(b), ns) << "bucket " << b;
  if (b + 1 < EDGESHED_LATENCY_BUCKETS) {
    EXPECT_LT(ns, edgeshed_latency_bucket_upper_ns(b)) << "bucket " << b;
  }
}

TEST(LatencyBuckets, EveryValueMapsIntoABucketThatContainsIt) {
  // Every unit up to 2^20 units (about 1 s), then powers of two and their
  // neighbours up to the top, then random values over the whole range.
  for (uint64_t u = 0; u < (1ull << 20); ++u) expect_in_bucket(u * kUnitNs + (u % kUnitNs));
  for (int e = 0; e < 64; ++e) {
    const uint64_t v = 1ull << e;
    expect_in_bucket(v - 1);
    expect_in_bucket(v);
    expect_in_bucket(v + 1);
  }
  std::mt19937_64 rng(42);
  for (int i = 0; i < 200000; ++i) expect_in_bucket(rng() >> (rng() % 64));
  expect_in_bucket(UINT64_MAX);
}

TEST(LatencyBuckets, BoundsTileTheRangeAndAreAtMostAnEighthWide) {
  EXPECT_EQ(edgeshed_latency_bucket_lower_ns(0), 0u);
  for (uint32_t b = 0; b < EDGESHED_LATENCY_BUCKETS; ++b) {
    const uint64_t lower = edgeshed_latency_bucket_lower_ns(b);
    const uint64_t upper = edgeshed_latency_bucket_upper_ns(b);
    ASSERT_LT(lower, upper) << b;
    EXPECT_EQ(edgeshed_latency_bucket(lower), b);
    EXPECT_EQ(edgeshed_latency_bucket(upper - 1), b);
    if (b + 1 < EDGESHED_LATENCY_BUCKETS) {
      EXPECT_EQ(edgeshed_latency_bucket_lower_ns(b + 1), upper) << "gap after " << b;
    }
    if (lower >= EDGESHED_LATENCY_SUB * kUnitNs) {
      EXPECT_LE(static_cast<double>(upper - lower) / static_cast<double>(lower), 0.125) << b;
    } else {
      EXPECT_EQ(upper - lower, kUnitNs) << b;  // the linear start: one unit each
    }
  }
  // The top bucket ends past a minute.
  EXPECT_GE(edgeshed_latency_bucket_upper_ns(EDGESHED_LATENCY_BUCKETS - 1), 60ull * 1000 * kMs);
  EXPECT_EQ(edgeshed_latency_bucket(3600ull * 1000 * kMs), EDGESHED_LATENCY_BUCKETS - 1);
}

void record(LatencyHistogram& h, uint64_t ns, uint64_t n = 1) {
  h.count += n;
  h.sum_ns += ns * n;
  h.buckets[edgeshed_latency_bucket(ns)] += n;
}

double bucket_width_s(uint64_t ns) {
  const uint32_t b = edgeshed_latency_bucket(ns);
  return static_cast<double>(edgeshed_latency_bucket_upper_ns(b) -
                             edgeshed_latency_bucket_lower_ns(b)) /
         1e9;
}

TEST(LatencyQuantile, EmptyHistogramHasNone) {
  LatencyHistogram h{};
  EXPECT_FALSE(latency_quantile_s(h, 0.5).has_value());
}

TEST(LatencyQuantile, UniformDistributionWithinABucketWidth) {
  LatencyHistogram h{};
  // 1 ms .. 100 ms in 10 us steps: quantile q is about 1 + 99 q ms.
  for (uint64_t ns = 1 * kMs; ns < 100 * kMs; ns += 10000) record(h, ns);
  for (double q : {0.1, 0.5, 0.9, 0.99}) {
    const double want = (1 + 99 * q) / 1000;
    const auto got = latency_quantile_s(h, q);
    ASSERT_TRUE(got.has_value());
    EXPECT_NEAR(*got, want, bucket_width_s(static_cast<uint64_t>(want * 1e9))) << "q " << q;
  }
}

TEST(LatencyQuantile, TwoPointDistribution) {
  LatencyHistogram h{};
  record(h, 20 * kMs, 900);
  record(h, 50 * kMs, 100);
  EXPECT_NEAR(*latency_quantile_s(h, 0.5), 0.020, bucket_width_s(20 * kMs));
  EXPECT_NEAR(*latency_quantile_s(h, 0.89), 0.020, bucket_width_s(20 * kMs));
  EXPECT_NEAR(*latency_quantile_s(h, 0.95), 0.050, bucket_width_s(50 * kMs));
  EXPECT_NEAR(*latency_quantile_s(h, 0.99), 0.050, bucket_width_s(50 * kMs));
}

// A cumulative snapshot source: samples are recorded into it, and each
// tick hands the window a copy.
struct Source {
  PortLatency p{kPort, {}};
  void add(LatencyMeasure m, uint64_t ns, uint64_t n = 1) {
    record(p.measures[static_cast<size_t>(m)], ns, n);
  }
  std::vector<PortLatency> snapshot() const { return {p}; }
};

TEST(LatencyWindow, FirstSnapshotIsOnlyTheBaseline) {
  LatencyWindow w(seconds(1));
  Source src;
  src.add(LatencyMeasure::kResponse, 5 * kMs, 1000);  // samples from before we looked
  w.update(milliseconds(100), src.snapshot());
  EXPECT_FALSE(w.stats(kPort, LatencyMeasure::kResponse).has_value());
  w.update(milliseconds(200), src.snapshot());
  EXPECT_FALSE(w.stats(kPort, LatencyMeasure::kResponse).has_value());
}

TEST(LatencyWindow, CountsRateMeanAndQuantilesOfTheWindow) {
  LatencyWindow w(seconds(1));
  Source src;
  w.update(milliseconds(0), src.snapshot());
  // 10 ticks of 100 ms, each with 10 responses of 20 ms and one connection.
  for (int t = 1; t <= 10; ++t) {
    src.add(LatencyMeasure::kResponse, 20 * kMs, 10);
    src.add(LatencyMeasure::kConnection, 30 * kMs);
    w.update(milliseconds(100 * t), src.snapshot());
  }
  auto r = w.stats(kPort, LatencyMeasure::kResponse);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->count, 100u);
  EXPECT_EQ(r->last_tick_count, 10u);
  EXPECT_NEAR(r->rate_per_s, 100.0, 1e-9);
  EXPECT_NEAR(r->mean_s, 0.020, 1e-12);
  EXPECT_NEAR(r->p50_s, 0.020, bucket_width_s(20 * kMs));
  EXPECT_NEAR(r->p99_s, 0.020, bucket_width_s(20 * kMs));
  auto c = w.stats(kPort, LatencyMeasure::kConnection);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->count, 10u);
  EXPECT_NEAR(c->rate_per_s, 10.0, 1e-9);
  EXPECT_NEAR(c->p90_s, 0.030, bucket_width_s(30 * kMs));
  EXPECT_FALSE(w.stats(kPort + 1, LatencyMeasure::kResponse).has_value());
}

TEST(LatencyWindow, OldSamplesExpire) {
  LatencyWindow w(seconds(1));
  Source src;
  w.update(milliseconds(0), src.snapshot());
  src.add(LatencyMeasure::kResponse, 100 * kMs, 50);  // slow, early
  w.update(milliseconds(100), src.snapshot());
  for (int t = 2; t <= 10; ++t) {
    src.add(LatencyMeasure::kResponse, 1 * kMs, 50);
    w.update(milliseconds(100 * t), src.snapshot());
  }
  EXPECT_EQ(w.stats(kPort, LatencyMeasure::kResponse)->count, 500u);
  EXPECT_GT(w.stats(kPort, LatencyMeasure::kResponse)->p99_s, 0.05);
  // The slow tick leaves the window; only fast samples remain.
  src.add(LatencyMeasure::kResponse, 1 * kMs, 50);
  w.update(milliseconds(1100), src.snapshot());
  auto r = w.stats(kPort, LatencyMeasure::kResponse);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->count, 500u);
  EXPECT_LT(r->p99_s, 0.002);
  // Quiet for longer than the window: nothing left.
  for (int t = 12; t <= 22; ++t) w.update(milliseconds(100 * t), src.snapshot());
  EXPECT_FALSE(w.stats(kPort, LatencyMeasure::kResponse).has_value());
}

TEST(LatencyWindow, CounterResetIsANewBaselineNotGarbage) {
  LatencyWindow w(seconds(1));
  Source src;
  src.add(LatencyMeasure::kResponse, 10 * kMs, 1000);
  w.update(milliseconds(0), src.snapshot());
  src.add(LatencyMeasure::kResponse, 10 * kMs, 10);
  w.update(milliseconds(100), src.snapshot());
  EXPECT_EQ(w.stats(kPort, LatencyMeasure::kResponse)->count, 10u);

  // The data plane is attached anew: its counts start again from a few.
  Source fresh;
  fresh.add(LatencyMeasure::kResponse, 40 * kMs, 3);
  w.update(milliseconds(200), fresh.snapshot());
  auto r = w.stats(kPort, LatencyMeasure::kResponse);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->count, 10u);  // the earlier tick's samples only
  EXPECT_EQ(r->last_tick_count, 0u);
  EXPECT_LT(r->p99_s, 0.012);

  // From the new baseline on, deltas are counted again.
  fresh.add(LatencyMeasure::kResponse, 40 * kMs, 5);
  w.update(milliseconds(300), fresh.snapshot());
  r = w.stats(kPort, LatencyMeasure::kResponse);
  EXPECT_EQ(r->count, 15u);
  EXPECT_EQ(r->last_tick_count, 5u);

  // One bucket going down with the count up is a reset too.
  Source odd = fresh;
  odd.p.measures[0].buckets[edgeshed_latency_bucket(40 * kMs)] = 0;
  odd.add(LatencyMeasure::kResponse, 1 * kMs, 100);
  w.update(milliseconds(400), odd.snapshot());
  EXPECT_EQ(w.stats(kPort, LatencyMeasure::kResponse)->count, 15u);
}

TEST(LatencyWindow, ClockGoingBackwardsEmptiesTheWindow) {
  LatencyWindow w(seconds(1));
  Source src;
  w.update(milliseconds(500), src.snapshot());
  src.add(LatencyMeasure::kResponse, 10 * kMs, 10);
  w.update(milliseconds(600), src.snapshot());
  ASSERT_TRUE(w.stats(kPort, LatencyMeasure::kResponse).has_value());
  w.update(milliseconds(100), src.snapshot());
  EXPECT_FALSE(w.stats(kPort, LatencyMeasure::kResponse).has_value());
  src.add(LatencyMeasure::kResponse, 10 * kMs, 4);
  w.update(milliseconds(200), src.snapshot());
  EXPECT_EQ(w.stats(kPort, LatencyMeasure::kResponse)->count, 4u);
}

TEST(LatencyWindow, PortsAreKeptApart) {
  LatencyWindow w(milliseconds(500));
  PortLatency a{1000, {}}, b{2000, {}};
  w.update(milliseconds(0), {a, b});
  record(a.measures[0], 5 * kMs, 7);
  record(b.measures[0], 50 * kMs, 3);
  w.update(milliseconds(100), {a, b});
  EXPECT_EQ(w.stats(1000, LatencyMeasure::kResponse)->count, 7u);
  EXPECT_EQ(w.stats(2000, LatencyMeasure::kResponse)->count, 3u);
  EXPECT_NEAR(w.stats(2000, LatencyMeasure::kResponse)->mean_s, 0.050, 1e-12);
  EXPECT_EQ(w.window(), nanoseconds(milliseconds(500)));
}

}  // namespace
}  // namespace edgeshed::signals
