// refserver's Prometheus text, byte for byte.
#include <gtest/gtest.h>

#include <limits>

#include "tools/refserver_metrics.h"

namespace edgeshed::refserver {
namespace {

TEST(RefserverPromNumber, ShortestForm) {
  EXPECT_EQ(prom_number(10), "10");
  EXPECT_EQ(prom_number(0), "0");
  EXPECT_EQ(prom_number(0.0025), "0.0025");
  EXPECT_EQ(prom_number(0.1), "0.1");
  EXPECT_EQ(prom_number(2.5), "2.5");
  EXPECT_EQ(prom_number(1.422135498), "1.422135498");
  EXPECT_EQ(prom_number(std::numeric_limits<double>::infinity()), "+Inf");
}

TEST(RefserverHistogram, CumulativeBucketsWithInclusiveBounds) {
  Histogram h({0.01, 0.02, 0.05});
  h.observe(0.005);  // <= 0.01
  h.observe(0.01);   // on the bound: le is inclusive
  h.observe(0.015);  // <= 0.02
  h.observe(0.1);    // only +Inf
  EXPECT_EQ(h.render("x_seconds", "Help."),
            "# HELP x_seconds Help.\n"
            "# TYPE x_seconds histogram\n"
            "x_seconds_bucket{le=\"0.01\"} 2\n"
            "x_seconds_bucket{le=\"0.02\"} 3\n"
            "x_seconds_bucket{le=\"0.05\"} 3\n"
            "x_seconds_bucket{le=\"+Inf\"} 4\n"
            "x_seconds_sum 0.13\n"
            "x_seconds_count 4\n");
}

TEST(RefserverHistogram, DurationBucketsAsSpecified) {
  const auto& b = duration_buckets();
  ASSERT_EQ(b.size(), 19u);
  EXPECT_EQ(b.front(), 0.001);
  EXPECT_EQ(b[5], 0.02);
  EXPECT_EQ(b.back(), 5);
  Histogram h(b);
  std::string text = h.render("refserver_request_duration_seconds", "d");
  EXPECT_NE(text.find("refserver_request_duration_seconds_bucket{le=\"0.075\"} 0\n"),
            std::string::npos);
  EXPECT_NE(text.find("refserver_request_duration_seconds_bucket{le=\"+Inf\"} 0\n"
                      "refserver_request_duration_seconds_sum 0\n"
                      "refserver_request_duration_seconds_count 0\n"),
            std::string::npos);
}

TEST(RefserverRenderScalar, GaugeAndCounter) {
  EXPECT_EQ(render_scalar("refserver_workers", "gauge", "Slots.", 10),
            "# HELP refserver_workers Slots.\n"
            "# TYPE refserver_workers gauge\n"
            "refserver_workers 10\n");
  EXPECT_EQ(render_scalar("refserver_requests_total", "counter", "N.", 12345),
            "# HELP refserver_requests_total N.\n"
            "# TYPE refserver_requests_total counter\n"
            "refserver_requests_total 12345\n");
}

}  // namespace
}  // namespace edgeshed::refserver
