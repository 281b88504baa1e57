// When loadgen considers a response complete.
#include <gtest/gtest.h>

#include "tools/loadgen_http.h"

namespace edgeshed::loadgen {
namespace {

TEST(LoadgenMakeRequest, CloseAndKeepAlive) {
  EXPECT_EQ(make_request("/", "198.51.100.1", false),
            "GET / HTTP/1.1\r\nHost: 198.51.100.1\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(make_request("/x", "h", true),
            "GET /x HTTP/1.1\r\nHost: h\r\nConnection: keep-alive\r\n\r\n");
}

TEST(LoadgenParseResponse, CompleteWithContentLength) {
  std::string ok = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n";
  auto p = parse_response(ok, false);
  EXPECT_EQ(p.state, ResponseProgress::kComplete);
  EXPECT_EQ(p.status, 200);
  EXPECT_EQ(p.length, ok.size());
  EXPECT_TRUE(p.server_closes);
  // Everything short of the last byte is incomplete, and cut short at EOF.
  for (size_t n = 0; n < ok.size(); ++n) {
    EXPECT_EQ(parse_response(ok.substr(0, n), false).state, ResponseProgress::kIncomplete) << n;
    EXPECT_EQ(parse_response(ok.substr(0, n), true).state, ResponseProgress::kMalformed) << n;
  }
}

TEST(LoadgenParseResponse, KeepAliveAndPipelinedBytes) {
  std::string two =
      "HTTP/1.1 200 OK\r\ncontent-length: 3\r\n\r\nok\nHTTP/1.1 200 OK\r\nContent-Length: 3\r\n";
  auto p = parse_response(two, false);
  EXPECT_EQ(p.state, ResponseProgress::kComplete);
  EXPECT_FALSE(p.server_closes);
  EXPECT_EQ(p.length, two.find("ok\n") + 3);
}

TEST(LoadgenParseResponse, StatusAndOddities) {
  auto p503 = parse_response("HTTP/1.1 503 Busy\r\nContent-Length: 0\r\n\r\n", false);
  EXPECT_EQ(p503.state, ResponseProgress::kComplete);
  EXPECT_EQ(p503.status, 503);
  // No Content-Length: the body runs to EOF.
  EXPECT_EQ(parse_response("HTTP/1.0 200 OK\r\n\r\nbody", false).state,
            ResponseProgress::kIncomplete);
  auto eof = parse_response("HTTP/1.0 200 OK\r\n\r\nbody", true);
  EXPECT_EQ(eof.state, ResponseProgress::kComplete);
  EXPECT_TRUE(eof.server_closes);
  EXPECT_EQ(parse_response("SSH-2.0-x\r\n\r\n", false).state, ResponseProgress::kMalformed);
  EXPECT_EQ(parse_response("HTTP/1.1 2x0 OK\r\n\r\n", false).state, ResponseProgress::kMalformed);
  EXPECT_EQ(parse_response("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", false).state,
            ResponseProgress::kMalformed);
  EXPECT_EQ(parse_response("HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", false).state,
            ResponseProgress::kMalformed);
}

}  // namespace
}  // namespace edgeshed::loadgen
