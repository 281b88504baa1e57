// loadgen's statistics against values worked out by hand.
#include <gtest/gtest.h>

#include <vector>

#include "tools/loadgen_stats.h"

namespace edgeshed::loadgen {
namespace {

TEST(LoadgenNearestRank, OneToTen) {
  // n = 10: rank = ceil(p / 100 * 10).
  std::vector<double> v = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_EQ(nearest_rank(v, 0), 1);    // rank clamped to 1
  EXPECT_EQ(nearest_rank(v, 10), 1);   // ceil(1.0) = 1
  EXPECT_EQ(nearest_rank(v, 11), 2);   // ceil(1.1) = 2
  EXPECT_EQ(nearest_rank(v, 50), 5);   // ceil(5.0) = 5
  EXPECT_EQ(nearest_rank(v, 90), 9);   // 9.000000000000002 in doubles, still rank 9
  EXPECT_EQ(nearest_rank(v, 99), 10);  // ceil(9.9) = 10
  EXPECT_EQ(nearest_rank(v, 100), 10);
}

TEST(LoadgenNearestRank, TextbookFiveSamples) {
  // The classic example: 15 20 35 40 50.
  std::vector<double> v = {15, 20, 35, 40, 50};
  EXPECT_EQ(nearest_rank(v, 5), 15);    // ceil(0.25) = 1
  EXPECT_EQ(nearest_rank(v, 30), 20);   // ceil(1.5) = 2
  EXPECT_EQ(nearest_rank(v, 40), 20);   // ceil(2.0) = 2
  EXPECT_EQ(nearest_rank(v, 50), 35);   // ceil(2.5) = 3
  EXPECT_EQ(nearest_rank(v, 100), 50);  // ceil(5.0) = 5
}

TEST(LoadgenNearestRank, HundredAndThousandSamples) {
  std::vector<double> hundred, thousand;
  for (int i = 1; i <= 100; ++i) hundred.push_back(i * 0.5);
  for (int i = 1; i <= 1000; ++i) thousand.push_back(i);
  EXPECT_EQ(nearest_rank(hundred, 99), 49.5);  // rank 99 of 100
  EXPECT_EQ(nearest_rank(hundred, 99.5), 50);  // ceil(99.5) = 100
  EXPECT_EQ(nearest_rank(thousand, 99), 990);  // 99 * 1000 / 100 = 990 exactly
  EXPECT_EQ(nearest_rank(thousand, 99.9), 999);
}

TEST(LoadgenNearestRank, EmptyAndSingle) {
  std::vector<double> none, one = {7.5};
  EXPECT_FALSE(nearest_rank(none, 50).has_value());
  EXPECT_EQ(nearest_rank(one, 0), 7.5);
  EXPECT_EQ(nearest_rank(one, 99), 7.5);
}

TEST(LoadgenDescribe, SortsAndSummarises) {
  std::vector<double> v = {30, 10, 20, 40};
  Distribution d = describe(v);
  EXPECT_EQ(d.count, 4u);
  EXPECT_EQ(d.p50, 20);  // ceil(2.0) = 2
  EXPECT_EQ(d.p90, 40);  // ceil(3.6) = 4
  EXPECT_EQ(d.p99, 40);
  EXPECT_EQ(d.max, 40);
  EXPECT_EQ(d.mean, 25);
  std::vector<double> empty;
  Distribution e = describe(empty);
  EXPECT_EQ(e.count, 0u);
  EXPECT_FALSE(e.p99.has_value());
}

RequestRecord rec(uint16_t cls, Outcome outcome, double latency, double connect = -1,
                  std::string_view error = {}) {
  RequestRecord r;
  r.class_index = cls;
  r.outcome = outcome;
  r.latency_ms = latency;
  r.connect_ms = connect;
  r.error = error;
  return r;
}

TEST(LoadgenSummarize, CountsOutcomesPerGroup) {
  std::vector<RequestRecord> records = {
      rec(0, Outcome::kOk, 20, 0.1),   rec(0, Outcome::kOk, 22, 0.2),
      rec(0, Outcome::kRefused, 0.3),  rec(0, Outcome::kTimeout, 2000, 0.1),
      rec(1, Outcome::kReset, 5, 0.1), rec(1, Outcome::kError, 1, -1, "EADDRNOTAVAIL"),
      rec(1, Outcome::kOk, 40, 0.1),   rec(1, Outcome::kPending, 0),
  };
  auto all = summarize(records, 2.0, [](const RequestRecord&) { return true; });
  EXPECT_EQ(all.offered, 8u);
  EXPECT_EQ(all.ok, 3u);
  EXPECT_EQ(all.refused, 1u);
  EXPECT_EQ(all.reset, 1u);
  EXPECT_EQ(all.timeout, 2u);  // a request still pending at the end counts as a timeout
  EXPECT_EQ(all.error, 1u);
  EXPECT_EQ(all.error_reasons.at("EADDRNOTAVAIL"), 1u);
  EXPECT_DOUBLE_EQ(all.completed_per_sec, 1.5);  // 3 ok over 2 s
  EXPECT_EQ(all.ok_latency_ms.p50, 22);          // 20 22 40: ceil(1.5) = 2
  EXPECT_EQ(all.refused_ms.p99, 0.3);
  EXPECT_EQ(all.connect_ms.count, 5u);  // only those that connected

  auto cls0 = summarize(records, 2.0, [](const RequestRecord& r) { return r.class_index == 0; });
  EXPECT_EQ(cls0.offered, 4u);
  EXPECT_EQ(cls0.ok, 2u);
  EXPECT_EQ(cls0.ok_latency_ms.max, 22);
}

TEST(LoadgenSummarize, JsonHasNullPercentilesWithoutSamples) {
  std::vector<RequestRecord> records = {rec(0, Outcome::kRefused, 0.25)};
  auto g = summarize(records, 1.0, [](const RequestRecord&) { return true; });
  auto j = to_json(g);
  EXPECT_EQ(j["offered"], 1);
  EXPECT_EQ(j["refused"], 1);
  EXPECT_TRUE(j["ok_latency_ms"]["p99"].is_null());
  EXPECT_EQ(j["ok_latency_ms"]["count"], 0);
  EXPECT_DOUBLE_EQ(j["refused_ms"]["p99"].get<double>(), 0.25);
  EXPECT_EQ(j["completed_per_sec"], 0.0);
}

TEST(LoadgenOutcomeName, AllNamed) {
  EXPECT_EQ(outcome_name(Outcome::kOk), "ok");
  EXPECT_EQ(outcome_name(Outcome::kRefused), "refused");
  EXPECT_EQ(outcome_name(Outcome::kReset), "reset");
  EXPECT_EQ(outcome_name(Outcome::kTimeout), "timeout");
  EXPECT_EQ(outcome_name(Outcome::kError), "error");
}

}  // namespace
}  // namespace edgeshed::loadgen
