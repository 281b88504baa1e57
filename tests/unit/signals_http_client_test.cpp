// The HTTP client's own rules on top of libcurl: what it refuses that
// libcurl would take, the proxy variables it ignores, the source address it
// binds. Framing, limits, timeouts and cancelling are in
// signals_prometheus_test.cpp (ScrapeHttp.*).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "signals/http_client.h"
#include "signals/net_io.h"
#include "signals_test_server.h"

namespace edgeshed::signals {
namespace {

using std::chrono::milliseconds;
using testing::TestHttpServer;

HttpClient client_for(const TestHttpServer& server, bool keep_alive = true,
                      std::optional<SocketAddress> source = std::nullopt) {
  return HttpClient(parse_http_url(server.url("/metrics")).value(), {.timeout = milliseconds(1000),
                                                                     .max_body_bytes = 1 << 20,
                                                                     .keep_alive = keep_alive,
                                                                     .source = source,
                                                                     .accept = ""});
}

TestHttpServer::Response raw(const std::string& bytes) {
  TestHttpServer::Response r;
  r.bytes = bytes;
  return r;
}

// Sets environment variables for one scope and puts the old values back.
class ScopedEnv {
 public:
  ScopedEnv(std::vector<std::string> names, const std::string& value) : names_(std::move(names)) {
    for (const std::string& name : names_) {
      const char* old = std::getenv(name.c_str());
      old_.push_back(old != nullptr ? std::optional<std::string>(old) : std::nullopt);
      ::setenv(name.c_str(), value.c_str(), 1);
    }
  }
  ~ScopedEnv() {
    for (std::size_t i = 0; i < names_.size(); ++i) {
      if (old_[i]) {
        ::setenv(names_[i].c_str(), old_[i]->c_str(), 1);
      } else {
        ::unsetenv(names_[i].c_str());
      }
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::vector<std::string> names_;
  std::vector<std::optional<std::string>> old_;
};

TEST(HttpClient, AProxyInTheEnvironmentIsNotUsed) {
  std::string head;
  TestHttpServer server([&](const std::string& h) {
    head = h;
    return TestHttpServer::ok("m 1\n");
  });
  // libcurl reads these unless told otherwise; the service is local.
  const ScopedEnv env({"http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"},
                      "http://127.0.0.1:" + std::to_string(testing::closed_port()));
  auto r = client_for(server).get();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->body, "m 1\n");
  EXPECT_EQ(head.rfind("GET /metrics HTTP/1.1\r\n", 0), 0u) << head;  // not a proxy's absolute URL
}

TEST(HttpClient, RefusesWhatLibcurlWouldTake) {
  const std::pair<std::string, std::string> cases[] = {
      // libcurl would wait for a response after an upgrade it never asked for.
      {"HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n",
       "server switched protocols (101)"},
      // libcurl 7.88 takes the last of two lengths.
      {"HTTP/1.1 200 OK\r\nContent-Length: 4\r\nContent-Length: 5\r\n\r\nabcd",
       "bad Content-Length '5'"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
       "unsupported Transfer-Encoding 'gzip, chunked'"},
      {"HTTP/1.1 200 OK\r\nbroken\r\nContent-Length: 2\r\n\r\nok",
       "not a valid HTTP/1.x response: "},
  };
  for (const auto& [bytes, want] : cases) {
    // A copy: clang 14 cannot capture a structured binding.
    TestHttpServer server([answer = bytes](const std::string&) { return raw(answer); });
    auto r = client_for(server).get();
    ASSERT_FALSE(r) << bytes;
    EXPECT_NE(r.error().message.find("GET " + server.url("/metrics") + ": " + want),
              std::string::npos)
        << r.error().message;
  }
}

TEST(HttpClient, InterimResponsesAreSkipped) {
  TestHttpServer server([](const std::string&) {
    return raw(
        "HTTP/1.1 100 Continue\r\nX-A: 1\r\n\r\n"
        "HTTP/1.1 203 Non-Authoritative Information\r\nContent-Type: text/plain\r\n"
        "Content-Length: 2\r\n\r\nok");
  });
  auto r = client_for(server).get();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->status, 203);
  EXPECT_EQ(r->reason, "Non-Authoritative Information");
  EXPECT_EQ(r->content_type, "text/plain");
  EXPECT_EQ(r->body, "ok");
}

TEST(HttpClient, BindsTheSourceAddressOnEveryNewConnection) {
  TestHttpServer server([](const std::string&) { return TestHttpServer::ok("ok"); });
  auto client = client_for(server, /*keep_alive=*/false, parse_ip_address("127.0.0.1", 0).value());
  for (int i = 0; i < 2; ++i) {
    auto r = client.get();
    ASSERT_TRUE(r) << r.error().message;
  }
  EXPECT_EQ(client.connections_opened(), 2u);

  // An address of no interface here (TEST-NET-1): the bind fails, and says so.
  auto elsewhere = client_for(server, false, parse_ip_address("192.0.2.55", 0).value());
  auto r = elsewhere.get();
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("Cannot assign requested address"), std::string::npos)
      << r.error().message;
}

}  // namespace
}  // namespace edgeshed::signals
