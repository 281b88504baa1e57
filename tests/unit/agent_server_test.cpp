// The HAProxy agent-check responder on a real loopback socket: one line per
// connection from the last published snapshot, then the server's FIN; a
// stalled peer does not hold it; a port in use is an error at start.
#include "daemon/agent_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include "common/fd.h"
#include "common/loopback.h"

namespace edgeshed::daemon {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

// Everything the server sends until it closes, within `limit`.
std::string read_to_close(int fd, milliseconds limit = milliseconds(3000)) {
  std::string out;
  const auto deadline = steady_clock::now() + limit;
  for (;;) {
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - steady_clock::now());
    if (left.count() <= 0) return out + "<timeout>";
    pollfd p = {fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char buf[256];
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return out;
    out.append(buf, static_cast<size_t>(n));
  }
}

std::unique_ptr<AgentServer> start_on_loopback() {
  auto server = AgentServer::start("127.0.0.1", 0);
  EXPECT_TRUE(server) << server.error().message;
  return server ? std::move(*server) : nullptr;
}

std::shared_ptr<const MetricsSnapshot> snapshot_at(law::Level level, uint32_t normal_cap) {
  auto s = std::make_shared<MetricsSnapshot>();
  s->level = level;
  s->mode = law::Mode::kEnforce;
  s->policies[law::index_of(law::TrafficClass::kNormal)].inflight_cap = normal_cap;
  return s;
}

TEST(AgentServer, AnswersTheLastPublishedSnapshotThenCloses) {
  auto server = start_on_loopback();
  ASSERT_TRUE(server);
  ASSERT_NE(server->port(), 0);
  {
    Fd c = testing::connect_loopback(AF_INET, server->port());
    ASSERT_TRUE(c.valid());
    EXPECT_EQ(read_to_close(c.get()), "") << "before the first tick: nothing to say";
  }
  server->publish(snapshot_at(law::Level::kNormal, law::kUnlimited));
  {
    Fd c = testing::connect_loopback(AF_INET, server->port());
    EXPECT_EQ(read_to_close(c.get()), "100% ready maxconn:0\n");
  }
  server->publish(snapshot_at(law::Level::kHigh, 12));
  {
    Fd c = testing::connect_loopback(AF_INET, server->port());
    EXPECT_EQ(read_to_close(c.get()), "25% ready maxconn:12\n");
  }
  config::AgentReplyConfig reloaded;
  reloaded.weight_percent = {100, 100, 50, 0};
  reloaded.send_maxconn = false;
  auto after_reload = std::make_shared<MetricsSnapshot>(*snapshot_at(law::Level::kHigh, 12));
  after_reload->agent_reply = reloaded;
  server->publish(after_reload);
  {
    Fd c = testing::connect_loopback(AF_INET, server->port());
    EXPECT_EQ(read_to_close(c.get()), "50% ready\n");
  }
}

TEST(AgentServer, APeerThatWritesFirstStillGetsTheLine) {
  auto server = start_on_loopback();
  ASSERT_TRUE(server);
  server->publish(snapshot_at(law::Level::kCritical, law::kUnlimited));
  Fd c = testing::connect_loopback(AF_INET, server->port());
  const std::string hello = "backend-a\n";  // what HAProxy's agent-send would write
  ASSERT_EQ(::send(c.get(), hello.data(), hello.size(), 0), static_cast<ssize_t>(hello.size()));
  EXPECT_EQ(read_to_close(c.get()), "0% drain maxconn:0\n");
}

TEST(AgentServer, AStalledPeerDoesNotHoldTheNextOne) {
  auto server = start_on_loopback();
  ASSERT_TRUE(server);
  server->publish(snapshot_at(law::Level::kNormal, law::kUnlimited));
  // Connects and never reads, writes or closes.
  Fd stalled = testing::connect_loopback(AF_INET, server->port());
  ASSERT_TRUE(stalled.valid());
  const auto start = steady_clock::now();
  Fd c = testing::connect_loopback(AF_INET, server->port());
  EXPECT_EQ(read_to_close(c.get()), "100% ready maxconn:0\n");
  EXPECT_LT(steady_clock::now() - start, milliseconds(1500))
      << "the stalled peer held the responder past its deadline";
}

TEST(AgentServer, IPv6) {
  auto server = AgentServer::start("::1", 0);
  ASSERT_TRUE(server) << server.error().message;
  (*server)->publish(snapshot_at(law::Level::kElevated, law::kUnlimited));
  Fd c = testing::connect_loopback(AF_INET6, (*server)->port());
  ASSERT_TRUE(c.valid());
  EXPECT_EQ(read_to_close(c.get()), "60% ready maxconn:0\n");
}

TEST(AgentServer, APortInUseIsAnErrorAtStart) {
  uint16_t port = 0;
  Fd taken = testing::listen_on_loopback(AF_INET, &port);
  ASSERT_TRUE(taken.valid());
  auto server = AgentServer::start("127.0.0.1", port);
  ASSERT_FALSE(server);
  EXPECT_EQ(server.error().message,
            "cannot listen for the HAProxy agent on 127.0.0.1:" + std::to_string(port) +
                ": Address already in use (port in use? set [agent] "
                "listen, or \"off\")");
}

TEST(AgentServer, StopsPromptly) {
  auto server = start_on_loopback();
  ASSERT_TRUE(server);
  const auto start = steady_clock::now();
  server.reset();
  EXPECT_LT(steady_clock::now() - start, milliseconds(500));
}

}  // namespace
}  // namespace edgeshed::daemon
