// The prometheus signal: the text-format parser, histogram quantiles over a
// window, the HTTP client, and the scrape source against a loopback server.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/expect_refused.h"
#include "common/wait_until.h"
#include "config/config.h"
#include "signals/http_client.h"
#include "signals/parse/histogram.h"
#include "signals/parse/prometheus_text.h"
#include "signals/prometheus_signal.h"
#include "signals/signal_kinds.h"
#include "signals/signal_set.h"
#include "signals_test_server.h"
#include "unit/fixture_text.h"

namespace edgeshed::signals {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using testing::fixture;
using testing::TestHttpServer;
using testing::wait_until;

nanoseconds mono_now() { return std::chrono::steady_clock::now().time_since_epoch(); }

config::SignalConfig signal_config(const std::string& keys) {
  auto cfg = signals::parse_config("[[signal]]\nname = \"s\"\ntarget = 1.0\n" + keys, "t.toml");
  EXPECT_TRUE(cfg) << cfg.error().message;
  return cfg ? cfg->signals.at(0) : config::SignalConfig{};
}

const MetricSample* find(const Exposition& e, const std::string& name, const Labels& labels = {}) {
  for (const MetricSample& s : e.samples) {
    if (s.name == name && s.labels == labels) return &s;
  }
  return nullptr;
}

// ---------------------------------------------------------------- parser

TEST(PromText, ParsesTheReferenceExample) {
  auto e = parse_prometheus_text(fixture("prometheus_example.txt"));
  ASSERT_TRUE(e) << e.error().message;
  EXPECT_EQ(e->samples.size(), 24u);

  const MetricSample* post = find(*e, "http_requests_total", {{"method", "post"}, {"code", "200"}});
  ASSERT_NE(post, nullptr);
  EXPECT_EQ(post->value, 1027);
  EXPECT_EQ(post->timestamp_ms, 1395066363000);

  const MetricSample* msdos =
      find(*e, "msdos_file_access_time_seconds",
           {{"path", "C:\\DIR\\FILE.TXT"}, {"error", "Cannot find file:\n\"FILE.TXT\""}});
  ASSERT_NE(msdos, nullptr);
  EXPECT_EQ(msdos->value, 1.458255915e9);
  EXPECT_FALSE(msdos->timestamp_ms.has_value());

  const MetricSample* weird = find(*e, "something_weird", {{"problem", "division by zero"}});
  ASSERT_NE(weird, nullptr);
  EXPECT_TRUE(std::isinf(weird->value) && weird->value > 0);
  EXPECT_EQ(weird->timestamp_ms, -3982045);

  EXPECT_EQ(find(*e, "http_request_duration_seconds_bucket", {{"le", "+Inf"}})->value, 144320);
  EXPECT_EQ(find(*e, "rpc_duration_seconds_sum")->value, 1.7560473e+07);
  EXPECT_EQ(find(*e, "refserver_inflight", {{"pool", "main"}})->value, 17);
  EXPECT_TRUE(std::isnan(find(*e, "refserver_queue_ratio")->value));
  EXPECT_EQ(find(*e, "refserver_headroom")->value, -INFINITY);
  EXPECT_EQ(find(*e, "refserver_tiny")->value, 2.5e-7);

  EXPECT_EQ(e->help.at("http_requests_total"), "The total number of HTTP requests.");
  EXPECT_EQ(e->type_of("http_requests_total"), MetricType::kCounter);
  EXPECT_EQ(e->type_of("http_request_duration_seconds_bucket"), MetricType::kHistogram);
  EXPECT_EQ(e->type_of("http_request_duration_seconds_count"), MetricType::kHistogram);
  EXPECT_EQ(e->type_of("rpc_duration_seconds"), MetricType::kSummary);
  EXPECT_EQ(e->type_of("rpc_duration_seconds_count"), MetricType::kSummary);
  EXPECT_EQ(e->type_of("rpc_duration_seconds_bucket"), MetricType::kUntyped);
  EXPECT_EQ(e->type_of("refserver_inflight"), MetricType::kGauge);
  EXPECT_EQ(e->type_of("metric_without_timestamp_and_labels"), MetricType::kUntyped);
}

TEST(PromText, AcceptsEveryValueSpellingPrometheusDoes) {
  const std::pair<const char*, double> good[] = {
      {"1", 1},           {"-2.5", -2.5},    {"+3", 3},           {"1e3", 1000},
      {"1.5E-3", 0.0015}, {"-2e+2", -200},   {".5", 0.5},         {"7.", 7},
      {"+Inf", INFINITY}, {"Inf", INFINITY}, {"-inf", -INFINITY}, {"+infinity", INFINITY},
  };
  for (auto [text, want] : good) {
    auto e = parse_prometheus_text(std::string("m ") + text + "\n");
    ASSERT_TRUE(e) << text << ": " << e.error().message;
    EXPECT_EQ(e->samples[0].value, want) << text;
  }
  for (const char* nan : {"NaN", "nan", "NAN"}) {
    auto e = parse_prometheus_text(std::string("m ") + nan);
    ASSERT_TRUE(e) << nan;
    EXPECT_TRUE(std::isnan(e->samples[0].value));
  }
}

TEST(PromText, LabelSetSpacingTrailingCommaAndEmptySet) {
  auto e = parse_prometheus_text(
      "a{ x = \"1\" , y=\"2\", } 5\r\n"
      "b{} 6\r\n"
      "  c{z=\"\"}7\n"
      "\n"
      "   # indented comment\n"
      "#HELP d no space after the hash\n"
      "d\t8\t123\t\n");
  ASSERT_TRUE(e) << e.error().message;
  ASSERT_EQ(e->samples.size(), 4u);
  EXPECT_EQ(e->samples[0].labels, (Labels{{"x", "1"}, {"y", "2"}}));
  EXPECT_TRUE(e->samples[1].labels.empty());
  EXPECT_EQ(e->samples[2].labels, (Labels{{"z", ""}}));
  EXPECT_EQ(e->samples[2].value, 7);
  EXPECT_EQ(e->samples[3].timestamp_ms, 123);
  EXPECT_EQ(e->help.at("d"), "no space after the hash");
}

TEST(PromText, EmptyAndCommentOnlyInputHasNoSamples) {
  for (const char* text : {"", "\n\n", "# just a comment\n# another\n", "# TYPE x gauge\n"}) {
    auto e = parse_prometheus_text(text);
    ASSERT_TRUE(e) << text;
    EXPECT_TRUE(e->samples.empty());
  }
}

TEST(PromText, RejectsMalformedInputNamingTheLineAndTheProblem) {
  const std::pair<const char*, const char*> bad[] = {
      {"a{b=\"x} 1", "line 1: unterminated value of label 'b'"},
      {"a{b=\"x\\q\"} 1", "line 1: bad escape '\\q' in the value of label 'b'"},
      {"a{b=\"x\\", "line 1: unterminated value of label 'b'"},
      {"a{b=\"x\"}", "line 1: missing value for 'a'"},
      {"a", "line 1: missing value for 'a'"},
      {"a 12abc", "line 1: value '12abc' is not a number"},
      {"a 0x10", "value '0x10' is not a number"},
      {"a 1_000", "value '1_000' is not a number"},
      {"a +-1", "value '+-1' is not a number"},
      {"a nan(1)", "value 'nan(1)' is not a number"},
      {"a 1e999", "value '1e999' is out of range"},
      {"a{b=\"1\",b=\"2\"} 1", "line 1: duplicate label name 'b'"},
      {"1abc 1", "line 1: bad metric name '1abc'"},
      {"a-b 1", "line 1: bad metric name 'a-b'"},
      {"{a=\"1\"} 1", "line 1: missing metric name"},
      {"a{1b=\"x\"} 1", "line 1: bad label name '1b'"},
      {"a{b-c=\"x\"} 1", "line 1: bad label name 'b-c'"},
      {"a{b} 1", "line 1: expected '=' after label name 'b'"},
      {"a{b=1} 1", "line 1: expected '\"' to open the value of label 'b'"},
      {"a{b=\"1\" c=\"2\"} 1", "line 1: expected ',' or '}' after the value of label 'b'"},
      {"a{b=\"1\",", "line 1: unterminated label set"},
      {"a 1 2.5", "line 1: timestamp '2.5' is not an integer"},
      {"a 1 2 3", "line 1: unexpected '3' after the timestamp"},
      {"# TYPE a bogus", "line 1: unknown metric type 'bogus'"},
      {"# TYPE a", "line 1: TYPE line for 'a' names no type"},
      {"# TYPE a gauge extra", "line 1: unexpected 'extra' after the type of 'a'"},
      {"# TYPE 9a gauge", "line 1: TYPE line: bad metric name '9a'"},
      {"# HELP", "line 1: HELP line: missing metric name"},
      {"# TYPE a gauge\n# TYPE a counter", "line 2: second TYPE line for 'a'"},
      {"# HELP a x\n# HELP a y", "line 2: second HELP line for 'a'"},
      {"a 1\na 2", "line 2: series a appears twice"},
      {"a{x=\"1\"} 1\na{x=\"1\"} 2", "line 2: series a{x=\"1\"} appears twice"},
      {"ok 1\n\n# fine\nbad{ 1", "line 4: bad label name '1'"},
      {"ok 1\nbad{a=\"1\"", "line 2: unterminated label set"},
  };
  testing::expect_refusals(bad, [](const char* text) { return parse_prometheus_text(text); });
}

TEST(PromText, MutatedInputIsParsedOrRejectedWithALineNumberNeverCrashes) {
  const std::string base = fixture("prometheus_example.txt");
  const char alphabet[] = "{}\"\\=, \n#eE+-.0123456789abcINFNaf_:\t\r";
  uint32_t state = 12345;  // a fixed LCG: the same inputs on every run
  auto next = [&state] { return state = state * 1664525u + 1013904223u; };
  int rejected = 0;
  for (int round = 0; round < 2000; ++round) {
    std::string text = base;
    for (int edits = 1 + next() % 4; edits > 0; --edits) {
      std::size_t at = next() % text.size();
      char c = alphabet[next() % (sizeof(alphabet) - 1)];
      switch (next() % 3) {
        case 0:
          text[at] = c;
          break;
        case 1:
          text.insert(at, 1, c);
          break;
        default:
          text.erase(at, 1);
      }
    }
    auto e = parse_prometheus_text(text);
    if (!e) {
      ++rejected;
      EXPECT_EQ(e.error().message.rfind("line ", 0), 0u) << e.error().message;
    }
  }
  EXPECT_GT(rejected, 100);  // the mutations do reach the error paths
}

TEST(PromText, DistinctLabelValuesAreDistinctSeries) {
  auto e = parse_prometheus_text("a{x=\"1\"} 1\na{x=\"2\"} 2\na 3\n");
  ASSERT_TRUE(e) << e.error().message;
  EXPECT_EQ(e->samples.size(), 3u);
}

TEST(PromText, FormatSeriesEscapesLikeTheFormat) {
  EXPECT_EQ(format_series("m", {}), "m");
  EXPECT_EQ(format_series("m", {{"a", "x\"y\\z\n"}, {"b", "2"}}),
            "m{a=\"x\\\"y\\\\z\\n\",b=\"2\"}");
}

// ------------------------------------------------------------- histogram

std::vector<Bucket> buckets(std::initializer_list<std::pair<double, double>> list) {
  std::vector<Bucket> out;
  for (auto [le, count] : list) out.push_back({le, count});
  return out;
}

TEST(HistogramQuantile, InterpolatesWithinTheBucketByHand) {
  // 10 in (0, 0.1], 20 in (0.1, 0.2], 60 in (0.2, 0.5], 10 in (0.5, 1].
  auto b = buckets({{0.1, 10}, {0.2, 30}, {0.5, 90}, {1, 100}, {INFINITY, 100}});
  // p50: rank 50 is the 20th of 60 in (0.2, 0.5]: 0.2 + 0.3 * 20/60.
  EXPECT_DOUBLE_EQ(*histogram_quantile(0.5, b), 0.3);
  // p90: rank 90 is the last of (0.2, 0.5].
  EXPECT_DOUBLE_EQ(*histogram_quantile(0.9, b), 0.5);
  // p99: rank 99 is the 9th of 10 in (0.5, 1]: 0.5 + 0.5 * 9/10.
  EXPECT_DOUBLE_EQ(*histogram_quantile(0.99, b), 0.95);
  // The first bucket starts at 0: rank 5 of 10 in (0, 0.1].
  EXPECT_DOUBLE_EQ(*histogram_quantile(0.05, b), 0.05);
  EXPECT_DOUBLE_EQ(*histogram_quantile(1.0, b), 1.0);
}

TEST(HistogramQuantile, RankInTheInfBucketGivesTheLastFiniteBound) {
  auto b = buckets({{0.1, 10}, {0.2, 10}, {INFINITY, 20}});
  EXPECT_DOUBLE_EQ(*histogram_quantile(0.9, b), 0.2);  // rank 18 is past 0.2
  EXPECT_DOUBLE_EQ(*histogram_quantile(0.25, b), 0.05);
}

TEST(HistogramQuantile, NoObservationsOrNoFiniteBucketIsNoValue) {
  EXPECT_FALSE(histogram_quantile(0.9, buckets({{0.1, 0}, {1, 0}, {INFINITY, 0}})));
  EXPECT_FALSE(histogram_quantile(0.9, buckets({{INFINITY, 5}})));
  EXPECT_FALSE(histogram_quantile(0.9, buckets({{0.1, 5}, {1, 9}})));  // no +Inf
  EXPECT_FALSE(histogram_quantile(0.9, {}));
  EXPECT_FALSE(histogram_quantile(1.5, buckets({{0.1, 1}, {INFINITY, 1}})));
  EXPECT_FALSE(histogram_quantile(NAN, buckets({{0.1, 1}, {INFINITY, 1}})));
}

TEST(HistogramQuantile, NonMonotonicCountsAreEvenedOutAsPrometheusDoes) {
  // 0.2 reads one below 0.1 (precision loss): treated as 10.
  auto b = buckets({{0.1, 10}, {0.2, 9}, {0.4, 20}, {INFINITY, 20}});
  EXPECT_DOUBLE_EQ(*histogram_quantile(0.75, b), 0.3);  // rank 15: 5th of 10 in (0.2, 0.4]
}

HistogramSnapshot snapshot(std::initializer_list<std::pair<double, double>> list, double count,
                           double sum) {
  return {buckets(list), count, sum};
}

TEST(HistogramWindowTracker, QuantilesComeFromTheDeltasBetweenScrapes) {
  HistogramWindowTracker tracker;
  EXPECT_EQ(tracker.add(
                snapshot({{0.1, 100}, {0.2, 200}, {0.5, 300}, {1, 300}, {INFINITY, 300}}, 300, 60)),
            HistogramWindowTracker::Outcome::kFirst);
  // Since then: 10, 20, 60, 10 in the four finite buckets; the cumulative
  // totals alone would give a p50 of 0.15.
  EXPECT_EQ(tracker.add(
                snapshot({{0.1, 110}, {0.2, 230}, {0.5, 390}, {1, 400}, {INFINITY, 400}}, 400, 90)),
            HistogramWindowTracker::Outcome::kWindow);
  const HistogramWindow& w = tracker.window();
  EXPECT_DOUBLE_EQ(w.count, 100);
  Quantiles q = window_quantiles(w);
  EXPECT_DOUBLE_EQ(*q.p50, 0.3);
  EXPECT_DOUBLE_EQ(*q.p90, 0.5);
  EXPECT_DOUBLE_EQ(*q.p99, 0.95);
  EXPECT_DOUBLE_EQ(*w.mean(), 0.3);
}

TEST(HistogramWindowTracker, AQuietWindowHasNoValueNotZero) {
  HistogramWindowTracker tracker;
  auto same = snapshot({{0.1, 5}, {INFINITY, 8}}, 8, 1);
  tracker.add(same);
  ASSERT_EQ(tracker.add(same), HistogramWindowTracker::Outcome::kWindow);
  Quantiles q = window_quantiles(tracker.window());
  EXPECT_FALSE(q.p50);
  EXPECT_FALSE(q.p90);
  EXPECT_FALSE(q.p99);
  EXPECT_FALSE(tracker.window().mean());
}

TEST(HistogramWindowTracker, ACounterResetStartsANewBase) {
  HistogramWindowTracker tracker;
  tracker.add(snapshot({{0.1, 50}, {1, 100}, {INFINITY, 100}}, 100, 20));
  // The target restarted: counts went down.
  EXPECT_EQ(tracker.add(snapshot({{0.1, 2}, {1, 4}, {INFINITY, 4}}, 4, 1)),
            HistogramWindowTracker::Outcome::kReset);
  // The next window counts from the restart, not from before it.
  ASSERT_EQ(tracker.add(snapshot({{0.1, 2}, {1, 14}, {INFINITY, 14}}, 14, 6)),
            HistogramWindowTracker::Outcome::kWindow);
  EXPECT_DOUBLE_EQ(tracker.window().count, 10);
  EXPECT_DOUBLE_EQ(*tracker.window().quantile(0.5), 0.55);  // 5th of 10 in (0.1, 1]
}

TEST(HistogramWindowTracker, ACountResetAloneOrNewBucketsAlsoReset) {
  HistogramWindowTracker tracker;
  tracker.add(snapshot({{0.1, 5}, {INFINITY, 10}}, 10, 1));
  // _count went down although no bucket did.
  EXPECT_EQ(tracker.add(snapshot({{0.1, 5}, {INFINITY, 10}}, 9, 1)),
            HistogramWindowTracker::Outcome::kReset);
  EXPECT_EQ(tracker.add(snapshot({{0.2, 5}, {INFINITY, 10}}, 10, 1)),
            HistogramWindowTracker::Outcome::kReset);
  EXPECT_EQ(tracker.add(snapshot({{0.2, 5}, {0.4, 7}, {INFINITY, 10}}, 10, 1)),
            HistogramWindowTracker::Outcome::kReset);
  EXPECT_EQ(tracker.add(snapshot({{0.2, 6}, {0.4, 8}, {INFINITY, 11}}, 11, 1)),
            HistogramWindowTracker::Outcome::kWindow);
}

constexpr const char* kTwoHandlers = R"(# TYPE req_seconds histogram
req_seconds_bucket{handler="a",le="0.1"} 1
req_seconds_bucket{handler="a",le="1"} 3
req_seconds_bucket{handler="a",le="+Inf"} 4
req_seconds_count{handler="a"} 4
req_seconds_sum{handler="a"} 2.5
req_seconds_bucket{handler="b",le="0.1"} 10
req_seconds_bucket{handler="b",le="1.0"} 30
req_seconds_bucket{handler="b",le="+Inf"} 40
req_seconds_count{handler="b"} 40
req_seconds_sum{handler="b"} 7.5
)";

TEST(HistogramExtract, MatchingSeriesAreSummedByBucket) {
  auto e = parse_prometheus_text(kTwoHandlers);
  ASSERT_TRUE(e) << e.error().message;
  auto all = extract_histogram(*e, "req_seconds", {});
  ASSERT_TRUE(all) << all.error().message;
  ASSERT_EQ(all->buckets.size(), 3u);  // "1" and "1.0" are one bound
  EXPECT_EQ(all->buckets[0].upper_bound, 0.1);
  EXPECT_EQ(all->buckets[0].count, 11);
  EXPECT_EQ(all->buckets[1].count, 33);
  EXPECT_TRUE(std::isinf(all->buckets[2].upper_bound));
  EXPECT_EQ(all->buckets[2].count, 44);
  EXPECT_EQ(all->count, 44);
  EXPECT_EQ(all->sum, 10);

  auto a = extract_histogram(*e, "req_seconds", {{"handler", "a"}});
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(a->buckets[1].count, 3);
  EXPECT_EQ(a->count, 4);
}

TEST(HistogramExtract, RejectsWhatIsNotAUsableHistogram) {
  const std::pair<const char*, const char*> bad[] = {
      {"x 1", "no series req_seconds_bucket{handler=\"a\"} in the scrape"},
      {"req_seconds_bucket{handler=\"a\"} 1", "has no le label"},
      {"req_seconds_bucket{handler=\"a\",le=\"fast\"} 1", "le=\"fast\" is not a bucket bound"},
      {"req_seconds_bucket{handler=\"a\",le=\"0.1\"} 1\n"
       "req_seconds_bucket{handler=\"a\",le=\"1\"} 2",
       "has no le=\"+Inf\" bucket"},
      {"req_seconds_bucket{handler=\"a\",le=\"0.1\",x=\"1\"} 1\n"
       "req_seconds_bucket{handler=\"a\",le=\"+Inf\",x=\"1\"} 1\n"
       "req_seconds_bucket{handler=\"a\",le=\"0.2\",x=\"2\"} 1\n"
       "req_seconds_bucket{handler=\"a\",le=\"+Inf\",x=\"2\"} 1\n",
       "have different buckets: add labels to select one"},
  };
  for (auto [text, want] : bad) {
    auto e = parse_prometheus_text(text);
    ASSERT_TRUE(e) << e.error().message;
    auto h = extract_histogram(*e, "req_seconds", {{"handler", "a"}});
    ASSERT_FALSE(h) << text;
    EXPECT_NE(h.error().message.find(want), std::string::npos) << h.error().message;
  }
}

// ------------------------------------------------------------ the reader

TEST(PromRead, GaugeSelectedByNameAndLabels) {
  auto e = parse_prometheus_text(
      "# TYPE inflight gauge\ninflight{pool=\"a\"} 3\ninflight{pool=\"b\"} 5\nother 1\n");
  ASSERT_TRUE(e);
  MetricReader b("inflight", {{"pool", "b"}}, std::nullopt);
  EXPECT_EQ(b.read(*e).value(), 5);
  MetricReader other("other", {}, std::nullopt);
  EXPECT_EQ(other.read(*e).value(), 1);
}

TEST(PromRead, GaugeErrorsSayWhatMatchedAndWhatToDo) {
  auto e = parse_prometheus_text(
      "# TYPE inflight gauge\ninflight{pool=\"a\"} 3\ninflight{pool=\"b\"} 5\n"
      "# TYPE total counter\ntotal 9\n# TYPE lat histogram\nlat_bucket{le=\"+Inf\"} 1\n"
      "untyped_lat_bucket{le=\"+Inf\"} 1\nbroken NaN\n");
  ASSERT_TRUE(e) << e.error().message;
  const std::pair<MetricReader, const char*> cases[] = {
      {MetricReader("inflight", {}, std::nullopt),
       "2 series match inflight, e.g. inflight{pool=\"a\"} and inflight{pool=\"b\"}: add labels"},
      {MetricReader("inflight", {{"pool", "c"}}, std::nullopt),
       "no series inflight{pool=\"c\"} in the scrape (there is inflight{pool=\"b\"})"},
      {MetricReader("missing", {}, std::nullopt), "no series missing in the scrape (6 samples)"},
      {MetricReader("total", {}, std::nullopt), "total is a counter, which only grows"},
      {MetricReader("lat", {}, std::nullopt), "lat is a histogram: set quantile"},
      {MetricReader("untyped_lat", {}, std::nullopt), "untyped_lat is a histogram: set quantile"},
      {MetricReader("broken", {}, std::nullopt), "broken is nan, not a usable value"},
      {MetricReader("inflight", {}, 0.9), "inflight is a gauge, not a histogram"},
  };
  for (auto [reader, want] : cases) {
    auto v = reader.read(*e);
    ASSERT_FALSE(v) << want;
    EXPECT_NE(v.error().message.find(want), std::string::npos) << v.error().message;
  }
}

std::string latency_text(double fast, double slow, double total) {
  return "# TYPE lat histogram\nlat_bucket{le=\"0.1\"} " + std::to_string(fast) +
         "\nlat_bucket{le=\"0.5\"} " + std::to_string(slow) + "\nlat_bucket{le=\"+Inf\"} " +
         std::to_string(total) + "\nlat_count " + std::to_string(total) + "\nlat_sum 1\n";
}

TEST(PromRead, QuantileOverTheWindowWithNoValueWhenThereIsNone) {
  MetricReader reader("lat", {}, 0.5);
  auto read = [&](double fast, double slow, double total) {
    auto e = parse_prometheus_text(latency_text(fast, slow, total));
    EXPECT_TRUE(e) << e.error().message;
    return reader.read(*e);
  };
  auto first = read(10, 10, 10);
  ASSERT_FALSE(first);
  EXPECT_NE(first.error().message.find("first scrape of lat"), std::string::npos);
  // 20 new: 0 fast, 20 in (0.1, 0.5]: the median is halfway.
  auto second = read(10, 30, 30);
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_DOUBLE_EQ(*second, 0.3);
  auto quiet = read(10, 30, 30);
  ASSERT_FALSE(quiet);
  EXPECT_NE(quiet.error().message.find("no observations of lat since the previous scrape"),
            std::string::npos);
  auto reset = read(1, 1, 1);
  ASSERT_FALSE(reset);
  EXPECT_NE(reset.error().message.find("went down"), std::string::npos);
  auto after = read(5, 5, 5);  // 4 new, all fast
  ASSERT_TRUE(after);
  EXPECT_DOUBLE_EQ(*after, 0.05);
}

// ---------------------------------------------------------------- config

TEST(PromConfig, DefaultsAndEveryKey) {
  auto minimal = prometheus_options(signal_config(
      "kind = \"prometheus\"\nstale_after = \"2s\"\nurl = \"http://127.0.0.1:9100/metrics\"\n"
      "metric = \"refserver_inflight\"\n"));
  ASSERT_TRUE(minimal) << minimal.error().message;
  EXPECT_EQ(minimal->url.authority, "127.0.0.1:9100");
  EXPECT_EQ(minimal->url.target, "/metrics");
  EXPECT_EQ(minimal->metric, "refserver_inflight");
  EXPECT_FALSE(minimal->quantile);
  EXPECT_TRUE(minimal->labels.empty());
  EXPECT_EQ(minimal->interval, std::chrono::seconds(1));
  EXPECT_EQ(minimal->timeout, milliseconds(200));
  EXPECT_EQ(minimal->max_bytes, 4u << 20);

  auto full = prometheus_options(
      signal_config("kind = \"prometheus\"\nstale_after = \"1s\"\nurl = \"http://[::1]:8080/m\"\n"
                    "metric = \"http_request_duration_seconds\"\nquantile = 0.99\n"
                    "labels = { handler = \"/api\", code = \"200\" }\ninterval = \"500ms\"\n"
                    "timeout = \"100ms\"\nmax_bytes = 65536\n"));
  ASSERT_TRUE(full) << full.error().message;
  EXPECT_EQ(full->url.host, "::1");
  EXPECT_EQ(*full->quantile, 0.99);
  EXPECT_EQ(full->labels, (Labels{{"handler", "/api"}, {"code", "200"}}));
  EXPECT_EQ(full->interval, milliseconds(500));
  EXPECT_EQ(full->timeout, milliseconds(100));
  EXPECT_EQ(full->max_bytes, 65536u);

  // A short interval shortens the default timeout with it.
  auto fast = prometheus_options(signal_config(
      "kind = \"prometheus\"\nurl = \"http://h/\"\nmetric = \"m\"\ninterval = \"100ms\"\n"));
  ASSERT_TRUE(fast) << fast.error().message;
  EXPECT_EQ(fast->timeout, milliseconds(100));
}

TEST(PromConfig, EveryBadKeyIsReportedWithItsLocation) {
  const std::pair<const char*, const char*> bad[] = {
      {"metric = \"m\"", "t.toml: signal[0].url: required for kind prometheus"},
      {"url = \"http://h/\"", "signal[0].metric: required"},
      {"url = \"https://h/\"\nmetric = \"m\"",
       "t.toml:6:1: signal[0].url = \"https://h/\": 'https://h/': https is not supported"},
      {"url = \"h:80/x\"\nmetric = \"m\"", "must start with http://"},
      {"url = 5\nmetric = \"m\"", "signal[0].url = 5: must be a string"},
      {"url = \"http://h/\"\nmetric = \"a-b\"", "t.toml:7:1: signal[0].metric = \"a-b\": not a"},
      {"url = \"http://h/\"\nmetric = \"m\"\nintervl = \"1s\"",
       "t.toml:8:1: signal[0].intervl: unknown key for kind prometheus (allowed: url, metric, "
       "labels, quantile, interval, timeout, max_bytes)"},
      {"url = \"http://h/\"\nmetric = \"m\"\nquantile = 1.5", "signal[0].quantile = 1.5: must be"},
      {"url = \"http://h/\"\nmetric = \"m\"\nquantile = 0", "must be above 0"},
      {"url = \"http://h/\"\nmetric = \"m\"\nquantile = \"p90\"", "must be a number"},
      {"url = \"http://h/\"\nmetric = \"m\"\nlabels = { a = 1 }",
       "the value of 'a' is not a string"},
      {"url = \"http://h/\"\nmetric = \"m\"\nlabels = \"a=b\"", "must be a table"},
      {"url = \"http://h/\"\nmetric = \"m\"\nquantile = 0.5\nlabels = { le = \"1\" }",
       "le selects one bucket"},
      {"url = \"http://h/\"\nmetric = \"m\"\ninterval = \"fast\"", "signal[0].interval = \"fast\""},
      {"url = \"http://h/\"\nmetric = \"m\"\ninterval = \"1ms\"", "must be 10ms..1h"},
      {"url = \"http://h/\"\nmetric = \"m\"\ninterval = \"1s\"\ntimeout = \"2s\"",
       "signal[0].timeout = \"2s\": must not exceed interval (1s)"},
      {"url = \"http://h/\"\nmetric = \"m\"\nmax_bytes = 10", "must be 1024..1073741824"},
      {"url = \"http://h/\"\nmetric = \"m\"\nmax_bytes = 1.5", "must be an integer"},
  };
  for (auto [keys, want] : bad) {
    auto o = prometheus_options(
        signal_config(std::string("kind = \"prometheus\"\nstale_after = \"10s\"\n") + keys));
    ASSERT_FALSE(o) << keys;
    EXPECT_NE(o.error().message.find(want), std::string::npos)
        << "keys: " << keys << "\nerror: " << o.error().message << "\nwanted: " << want;
  }
}

TEST(PromConfig, SeveralErrorsComeTogetherOnePerLine) {
  auto o = prometheus_options(signal_config(
      "kind = \"prometheus\"\nurl = \"ftp://h\"\nmetric = \"1m\"\ntimeout = \"x\"\n"));
  ASSERT_FALSE(o);
  EXPECT_EQ(std::count(o.error().message.begin(), o.error().message.end(), '\n'), 2)
      << o.error().message;
}

TEST(PromConfig, StaleAfterMustCoverAnIntervalAndATimeout) {
  auto o = prometheus_options(
      signal_config("kind = \"prometheus\"\nurl = \"http://h/\"\nmetric = \"m\"\n"));
  ASSERT_FALSE(o);
  EXPECT_EQ(o.error().message,
            "t.toml: signal[0].stale_after = \"1s\": must be at least interval + timeout "
            "(1200ms) for kind prometheus, or each sample goes stale before the next one can "
            "arrive");
}

// ------------------------------------------------------------------- URL

TEST(ScrapeUrl, ParsesHostPortAndTarget) {
  auto u = parse_http_url("http://127.0.0.1:9100/metrics?x=1#frag");
  ASSERT_TRUE(u) << u.error().message;
  EXPECT_EQ(u->host, "127.0.0.1");
  EXPECT_EQ(u->port, 9100);
  EXPECT_EQ(u->target, "/metrics?x=1");
  EXPECT_EQ(u->authority, "127.0.0.1:9100");
  EXPECT_EQ(u->to_string(), "http://127.0.0.1:9100/metrics?x=1");

  auto v6 = parse_http_url("http://[::1]:8080");
  ASSERT_TRUE(v6) << v6.error().message;
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->target, "/");
  EXPECT_EQ(v6->authority, "[::1]:8080");

  auto name = parse_http_url("HTTP://localhost?q");
  ASSERT_TRUE(name) << name.error().message;
  EXPECT_EQ(name->port, 80);
  EXPECT_EQ(name->target, "/?q");
}

// libcurl reads the URL (curl_url): what it refuses is refused with its
// reason after the URL; what it reads but edgeshed cannot fetch, with ours.
TEST(ScrapeUrl, RejectsWhatItCannotFetch) {
  const std::pair<const char*, const char*> bad[] = {
      // Ours.
      {"https://h/m", "https is not supported"},
      {"h:80/m", "must start with http://"},
      {"ftp://h/m", "must start with http://"},
      {"http://h:0/", "port '0' is not 1-65535"},
      {"http://u:p@h/", "user info"},
      // curl's.
      {"http://:80/m", "'http://:80/m': "},
      {"http://h:65536/", "'http://h:65536/': "},
      {"http://h:x/", "'http://h:x/': "},
      {"http://::1:80/", "'http://::1:80/': "},
      {"http://[::1/", "'http://[::1/': "},
      {"http://[nope]/", "'http://[nope]/': "},
      {"http://h/a b", "'http://h/a b': "},
      {"http://h h/", "'http://h h/': "},
  };
  testing::expect_refusals(bad, [](const char* url) { return parse_http_url(url); });
}

TEST(ScrapeUrl, AnEmptyPortIsTheDefault) {
  auto u = parse_http_url("http://h:/m");
  ASSERT_TRUE(u) << u.error().message;
  EXPECT_EQ(u->authority, "h:80");
}

// ----------------------------------------------------------- HTTP client

HttpClient client_for(const TestHttpServer& server, milliseconds timeout = milliseconds(1000),
                      std::size_t max = 1 << 20) {
  return HttpClient(parse_http_url(server.url("/metrics")).value(), {.timeout = timeout,
                                                                     .max_body_bytes = max,
                                                                     .keep_alive = true,
                                                                     .source = std::nullopt,
                                                                     .accept = "text/plain"});
}

TEST(ScrapeHttp, KeepAliveReusesOneConnection) {
  std::string seen_head;
  TestHttpServer server([&](const std::string& head) {
    seen_head = head;
    return TestHttpServer::ok("m 1\n");
  });
  HttpClient client = client_for(server);
  for (int i = 0; i < 3; ++i) {
    auto r = client.get();
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->body, "m 1\n");
  }
  EXPECT_EQ(server.connections(), 1);
  EXPECT_EQ(server.requests(), 3);
  EXPECT_EQ(client.connections_opened(), 1u);
  EXPECT_NE(seen_head.find("GET /metrics HTTP/1.1\r\n"), std::string::npos) << seen_head;
  EXPECT_NE(seen_head.find("Host: 127.0.0.1:" + std::to_string(server.port())), std::string::npos);
  EXPECT_NE(seen_head.find("Accept: text/plain\r\n"), std::string::npos);
  EXPECT_EQ(seen_head.find("Connection: close"), std::string::npos);
}

TEST(ScrapeHttp, ReconnectsWhenTheServerClosesOrSaysItWill) {
  TestHttpServer says(
      [](const std::string&) { return TestHttpServer::ok("x", "Connection: close\r\n"); });
  HttpClient a = client_for(says);
  TestHttpServer silent([](const std::string&) {
    auto r = TestHttpServer::ok("x");
    r.close_after = true;  // a keep-alive timeout on the server side
    return r;
  });
  HttpClient b = client_for(silent);
  for (int i = 0; i < 3; ++i) {
    auto ra = a.get();
    ASSERT_TRUE(ra) << ra.error().message;
    std::this_thread::sleep_for(milliseconds(20));  // let the close arrive
    auto rb = b.get();
    ASSERT_TRUE(rb) << rb.error().message;
    EXPECT_EQ(rb->body, "x");
    std::this_thread::sleep_for(milliseconds(20));
  }
  EXPECT_EQ(says.connections(), 3);
  EXPECT_EQ(silent.connections(), 3);
}

TEST(ScrapeHttp, ChunkedAndReadToCloseBodies) {
  TestHttpServer chunked([](const std::string&) {
    TestHttpServer::Response r;
    r.bytes =
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        "4;ext=1\r\nm 1\n\r\nA\r\nn 22222\nx\n\r\n0\r\nX-Trailer: t\r\n\r\n";
    return r;
  });
  auto c = client_for(chunked);
  for (int i = 0; i < 2; ++i) {
    auto r = c.get();
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->body, "m 1\nn 22222\nx\n");
  }
  EXPECT_EQ(chunked.connections(), 1);

  TestHttpServer to_close([](const std::string&) {
    TestHttpServer::Response r;
    r.bytes = "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nm 1\nn 2\n";
    r.close_after = true;
    return r;
  });
  auto d = client_for(to_close);
  auto r = d.get();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->body, "m 1\nn 2\n");
  EXPECT_EQ(r->content_type, "text/plain");
}

TEST(ScrapeHttp, BodiesOverTheLimitAreRejectedHoweverTheyAreFramed) {
  const std::string big(3000, 'x');
  const std::string framings[] = {
      "HTTP/1.1 200 OK\r\nContent-Length: 3000\r\n\r\n" + big,
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3E8\r\n" + big.substr(0, 1000) +
          "\r\n3E8\r\n" + big.substr(0, 1000) + "\r\n3E8\r\n" + big.substr(0, 1000) +
          "\r\n0\r\n\r\n",
      "HTTP/1.0 200 OK\r\n\r\n" + big,
  };
  for (const std::string& bytes : framings) {
    TestHttpServer server([&](const std::string&) {
      TestHttpServer::Response r;
      r.bytes = bytes;
      r.close_after = true;
      return r;
    });
    auto client = client_for(server, milliseconds(1000), 2048);
    auto r = client.get();
    ASSERT_FALSE(r) << bytes.substr(0, 40);
    EXPECT_NE(r.error().message.find("response body larger than the limit of 2048 bytes"),
              std::string::npos)
        << r.error().message;
  }
}

TEST(ScrapeHttp, TheTimeoutBoundsTheWholeExchangeNotEachRead) {
  TestHttpServer trickle([](const std::string&) {
    auto r = TestHttpServer::ok(std::string(200, 'x'));
    r.drip = milliseconds(10);  // each byte well within any per-read timeout
    return r;
  });
  auto client = client_for(trickle, milliseconds(150));
  auto start = std::chrono::steady_clock::now();
  auto r = client.get();
  auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("timed out after 150ms"), std::string::npos)
      << r.error().message;
  // The whole body takes 2 s to drip; the bound leaves a loaded machine
  // (and the sanitizers) a wide margin below it.
  EXPECT_LT(took, milliseconds(1500));
}

TEST(ScrapeHttp, ErrorsNameTheUrlAndTheCause) {
  TestHttpServer gzip(
      [](const std::string&) { return TestHttpServer::ok("x", "Content-Encoding: gzip\r\n"); });
  auto g = client_for(gzip).get();
  ASSERT_FALSE(g);
  EXPECT_NE(g.error().message.find("GET " + gzip.url("/metrics") + ": compressed response"),
            std::string::npos)
      << g.error().message;

  TestHttpServer garbage([](const std::string&) {
    TestHttpServer::Response r;
    r.bytes = "SSH-2.0-OpenSSH\r\n\r\n";
    return r;
  });
  auto b = client_for(garbage).get();
  ASSERT_FALSE(b);
  // libcurl rejects the line without handing it over, so it cannot be quoted.
  EXPECT_NE(b.error().message.find("GET " + garbage.url("/metrics") +
                                   ": not a valid HTTP/1.x response: "),
            std::string::npos)
      << b.error().message;

  HttpClient refused(
      parse_http_url("http://127.0.0.1:" + std::to_string(testing::closed_port()) + "/").value(),
      {});
  auto f = refused.get();
  ASSERT_FALSE(f);
  EXPECT_NE(f.error().message.find("Connection refused"), std::string::npos) << f.error().message;

  TestHttpServer status(
      [](const std::string&) { return TestHttpServer::status(503, "Service Unavailable"); });
  auto s = client_for(status).get();
  ASSERT_TRUE(s) << s.error().message;  // a status is an answer; callers judge it
  EXPECT_EQ(s->status, 503);
  EXPECT_EQ(s->reason, "Service Unavailable");
}

TEST(ScrapeHttp, CancellingEndsAWaitAtOnce) {
  TestHttpServer never([](const std::string&) {
    TestHttpServer::Response r;
    r.never = true;
    return r;
  });
  auto client = client_for(never, milliseconds(10000));
  Canceller canceller;
  std::thread later([&] {
    std::this_thread::sleep_for(milliseconds(50));
    canceller.cancel();
  });
  auto start = std::chrono::steady_clock::now();
  auto r = client.get(canceller.fd());
  auto took = std::chrono::steady_clock::now() - start;
  later.join();
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("cancelled"), std::string::npos);
  EXPECT_LT(took, milliseconds(5000));  // half the timeout: cancelled, not timed out
}

// --------------------------------------------------------- scrape source

// A [[signal]] of kind prometheus built the way the daemon builds it.
struct ScrapedSet {
  SignalSet set;
  PrometheusSignal* source = nullptr;
};

ScrapedSet build_scrape(const std::string& keys, const std::string& stale_after = "1s") {
  auto cfg = signals::parse_config(
      "[[signal]]\nname = \"scraped\"\nkind = \"prometheus\"\ntarget = 10.0\nstale_after = \"" +
          stale_after + "\"\n" + keys,
      "t.toml");
  EXPECT_TRUE(cfg) << cfg.error().message;
  auto set = SignalSet::build(cfg->signals, {});
  EXPECT_TRUE(set) << set.error().message;
  auto* source = dynamic_cast<PrometheusSignal*>(set->states()[0].source.get());
  return {std::move(*set), source};
}

std::string scrape_keys(const TestHttpServer& server, const std::string& more) {
  return "url = \"" + server.url("/metrics") + "\"\ninterval = \"100ms\"\ntimeout = \"100ms\"\n" +
         more;
}

TEST(ScrapeSource, ReadsAGaugeThroughTheSignalSet) {
  TestHttpServer server([](const std::string&) {
    return TestHttpServer::ok("# TYPE refserver_inflight gauge\nrefserver_inflight 42\n");
  });
  auto s = build_scrape(scrape_keys(server, "metric = \"refserver_inflight\"\n"));
  ASSERT_NE(s.source, nullptr);
  ASSERT_TRUE(wait_until([&] { return s.source->scrapes() >= 1; }));
  auto before = mono_now();
  auto r = s.set.sample(mono_now());
  ASSERT_EQ(r.size(), 1u);
  EXPECT_FALSE(r[0].stale) << s.set.states()[0].last_error;
  EXPECT_EQ(r[0].value, 42);
  EXPECT_EQ(r[0].target, 10.0);
  // The sample is stamped when the scrape completed, not when it was read.
  EXPECT_LE(s.set.states()[0].last_good.taken, before);
  EXPECT_GT(s.set.states()[0].last_good.taken, before - milliseconds(500));
}

TEST(ScrapeSource, SampleNeverWaitsForTheNetwork) {
  TestHttpServer never([](const std::string&) {
    TestHttpServer::Response r;
    r.never = true;
    return r;
  });
  auto s = build_scrape(
      "url = \"" + never.url("/") + "\"\nmetric = \"m\"\ninterval = \"5s\"\ntimeout = \"5s\"\n",
      "10s");
  ASSERT_TRUE(wait_until([&] { return never.requests() >= 1; }));
  auto start = std::chrono::steady_clock::now();
  auto r = s.set.sample(mono_now());
  // Bounds far below the 5 s timeout: a loaded 2-core machine under the
  // sanitizers must pass them; a sample that waited for the scrape would not.
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(2000));
  EXPECT_TRUE(r[0].stale);
  EXPECT_NE(s.set.states()[0].last_error.find("no result yet"), std::string::npos);
  // Destruction cancels the scrape in flight instead of waiting 5 s for it.
  start = std::chrono::steady_clock::now();
  s = ScrapedSet{};
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(2500));
}

TEST(ScrapeSource, ASlowServerTimesOutAndTheSignalGoesStale) {
  std::atomic<bool> slow{false};
  TestHttpServer server([&](const std::string&) {
    auto r = TestHttpServer::ok("m 7\n");
    if (slow) r.delay = milliseconds(600);
    return r;
  });
  auto s = build_scrape(scrape_keys(server, "metric = \"m\"\n"), "200ms");  // the least allowed
  ASSERT_TRUE(wait_until([&] { return s.source->scrapes() >= 1; }));
  auto r = s.set.sample(mono_now());
  EXPECT_FALSE(r[0].stale);
  EXPECT_EQ(r[0].value, 7);

  slow = true;
  uint64_t done = s.source->scrapes();
  ASSERT_TRUE(wait_until([&] { return s.source->scrapes() >= done + 2; }));
  r = s.set.sample(mono_now());
  EXPECT_NE(s.set.states()[0].last_error.find("timed out after 100ms"), std::string::npos)
      << s.set.states()[0].last_error;
  EXPECT_EQ(r[0].value, 7);  // the last good value, kept until it is too old
  std::this_thread::sleep_for(milliseconds(250));
  r = s.set.sample(mono_now());
  EXPECT_TRUE(r[0].stale);

  slow = false;
  done = s.source->scrapes();
  ASSERT_TRUE(wait_until([&] { return s.source->scrapes() >= done + 2; }));
  r = s.set.sample(mono_now());
  EXPECT_FALSE(r[0].stale) << s.set.states()[0].last_error;
  EXPECT_TRUE(s.set.states()[0].last_error.empty());
}

TEST(ScrapeSource, AnOversizedResponseIsRejected) {
  TestHttpServer server([](const std::string&) {
    return TestHttpServer::ok("m 1\n" + std::string(4096, '#') + "\n");
  });
  auto s = build_scrape(scrape_keys(server, "metric = \"m\"\nmax_bytes = 2048\n"));
  ASSERT_TRUE(wait_until([&] { return s.source->scrapes() >= 1; }));
  auto r = s.set.sample(mono_now());
  EXPECT_TRUE(r[0].stale);
  EXPECT_NE(s.set.states()[0].last_error.find("larger than the limit of 2048 bytes"),
            std::string::npos)
      << s.set.states()[0].last_error;
}

TEST(ScrapeSource, AMalformedBodyIsRejectedWithTheParsersMessage) {
  TestHttpServer server(
      [](const std::string&) { return TestHttpServer::ok("good 1\nm{path=\"/x} 1\n"); });
  auto s = build_scrape(scrape_keys(server, "metric = \"good\"\n"));
  ASSERT_TRUE(wait_until([&] { return s.source->scrapes() >= 1; }));
  auto r = s.set.sample(mono_now());
  EXPECT_TRUE(r[0].stale);
  EXPECT_EQ(
      s.set.states()[0].last_error,
      server.url("/metrics") + ": bad metrics text: line 2: unterminated value of label 'path'");
}

TEST(ScrapeSource, NonSuccessStatusIsAnError) {
  TestHttpServer server(
      [](const std::string&) { return TestHttpServer::status(500, "Internal Server Error"); });
  auto s = build_scrape(scrape_keys(server, "metric = \"m\"\n"));
  ASSERT_TRUE(wait_until([&] { return s.source->scrapes() >= 1; }));
  s.set.sample(mono_now());
  EXPECT_EQ(s.set.states()[0].last_error,
            "GET " + server.url("/metrics") + ": HTTP 500 Internal Server Error");
}

TEST(ScrapeSource, KeepAliveUsesOneConnectionAcrossScrapes) {
  TestHttpServer server([](const std::string&) { return TestHttpServer::ok("m 1\n"); });
  auto s = build_scrape(scrape_keys(server, "metric = \"m\"\n"));
  ASSERT_TRUE(wait_until([&] { return s.source->scrapes() >= 4; }));
  EXPECT_GE(server.requests(), 4);
  EXPECT_EQ(server.connections(), 1);
}

TEST(ScrapeSource, HistogramQuantileFromTheLastTwoScrapes) {
  std::atomic<int> n{0};
  TestHttpServer server([&](const std::string&) {
    // Each scrape, 10 more requests: 8 under 0.1 s, 2 in (0.1, 0.5].
    int i = n++;
    return TestHttpServer::ok(latency_text(8.0 * i, 10.0 * i, 10.0 * i));
  });
  auto s = build_scrape(scrape_keys(server, "metric = \"lat\"\nquantile = 0.9\nlabels = {}\n"));
  ASSERT_TRUE(wait_until([&] { return s.source->scrapes() >= 2; }));
  auto r = s.set.sample(mono_now());
  EXPECT_FALSE(r[0].stale) << s.set.states()[0].last_error;
  // rank 9 of 10: the 1st of 2 in (0.1, 0.5].
  EXPECT_DOUBLE_EQ(r[0].value, 0.3);
}

TEST(ScrapeSource, IPv6Endpoint) {
  TestHttpServer server([](const std::string&) { return TestHttpServer::ok("m 3\n"); },
                        /*ipv6=*/true);
  auto s = build_scrape(scrape_keys(server, "metric = \"m\"\n"));
  ASSERT_TRUE(wait_until([&] { return s.source->scrapes() >= 1; }));
  auto r = s.set.sample(mono_now());
  EXPECT_FALSE(r[0].stale) << s.set.states()[0].last_error;
  EXPECT_EQ(r[0].value, 3);
}

TEST(ScrapeSource, BadKeysFailTheBuildWithTheirLocation) {
  auto cfg = signals::parse_config(
      "[[signal]]\nname = \"p\"\nkind = \"prometheus\"\ntarget = 1.0\nstale_after = \"5s\"\n"
      "url = \"https://x/\"\nmetric = \"m\"\n",
      "t.toml");
  ASSERT_TRUE(cfg) << cfg.error().message;
  testing::expect_refused(SignalSet::build(cfg->signals, {}), {"t.toml:6:1: signal[0].url"});
}

}  // namespace
}  // namespace edgeshed::signals
