// refserver's request parsing and service times.
#include <gtest/gtest.h>

#include <random>

#include "tools/refserver_http.h"

namespace edgeshed::refserver {
namespace {

TEST(RefserverParseRequest, CloseKeepAliveAndDefaults) {
  std::string close = "GET /a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  Request r = parse_request(close);
  ASSERT_EQ(r.state, Request::kComplete);
  EXPECT_EQ(r.method, "GET");
  EXPECT_EQ(r.path, "/a");
  EXPECT_FALSE(r.keep_alive);
  EXPECT_EQ(r.length, close.size());

  EXPECT_TRUE(parse_request("GET / HTTP/1.1\r\nHost: x\r\n\r\n").keep_alive);  // 1.1 default
  EXPECT_TRUE(parse_request("GET / HTTP/1.1\r\nconnection: Keep-Alive\r\n\r\n").keep_alive);
  EXPECT_FALSE(parse_request("GET / HTTP/1.1\r\nConnection: TE, close\r\n\r\n").keep_alive);
  EXPECT_FALSE(parse_request("GET / HTTP/1.0\r\n\r\n").keep_alive);  // 1.0 default
  EXPECT_TRUE(parse_request("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").keep_alive);
}

TEST(RefserverParseRequest, IncompleteBodyAndPipelining) {
  EXPECT_EQ(parse_request("GET / HTTP/1.1\r\nHost: x\r\n").state, Request::kIncomplete);
  EXPECT_EQ(parse_request("").state, Request::kIncomplete);
  std::string post = "POST / HTTP/1.1\r\nContent-Length: 4\r\n\r\nab";
  EXPECT_EQ(parse_request(post).state, Request::kIncomplete);
  post += "cdGET /next HTTP/1.1\r\n\r\n";
  Request r = parse_request(post);
  ASSERT_EQ(r.state, Request::kComplete);
  EXPECT_EQ(post.substr(r.length), "GET /next HTTP/1.1\r\n\r\n");
}

TEST(RefserverParseRequest, Malformed) {
  for (const char* bad :
       {"GET /\r\n\r\n", "GET  HTTP/1.1\r\n\r\n", "GET / HTTP/2\r\n\r\n",
        "GET / HTTP/1.1\r\nno colon\r\n\r\n", "GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
        "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"}) {
    EXPECT_EQ(parse_request(bad).state, Request::kMalformed) << bad;
  }
  EXPECT_EQ(parse_request(std::string(kMaxRequestHead + 1, 'a')).state, Request::kMalformed);
}

TEST(RefserverStreamPath, OnlyTheStream) {
  EXPECT_TRUE(is_stream_path("/stream"));
  EXPECT_TRUE(is_stream_path("/stream?id=3"));
  EXPECT_FALSE(is_stream_path("/streams"));
  EXPECT_FALSE(is_stream_path("/"));
}

TEST(RefserverServiceTime, DistributionsKeepTheMean) {
  ServiceDist d;
  ASSERT_TRUE(parse_service_dist("exp", &d));
  EXPECT_EQ(d, ServiceDist::kExp);
  EXPECT_FALSE(parse_service_dist("normal", &d));
  std::mt19937_64 rng(7);
  EXPECT_EQ(draw_service_ms(ServiceDist::kFixed, 20, rng), 20);
  for (ServiceDist dist : {ServiceDist::kExp, ServiceDist::kUniform}) {
    double sum = 0, max = 0;
    for (int i = 0; i < 100000; ++i) {
      double v = draw_service_ms(dist, 20, rng);
      ASSERT_GE(v, 0);
      sum += v;
      max = std::max(max, v);
    }
    EXPECT_NEAR(sum / 100000, 20, 0.3);
    if (dist == ServiceDist::kUniform) {
      EXPECT_LE(max, 40);
    }
  }
}

}  // namespace
}  // namespace edgeshed::refserver
