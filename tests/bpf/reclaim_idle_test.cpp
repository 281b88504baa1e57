// The idle walks (reclaim_idle.bpf.h) on real loopback connections in a
// network namespace of the test's own: a connection is listed as idle only
// with nothing unread, everything sent acknowledged and no request in
// service; the reclaim walk aborts the chosen ones that are still idle (the
// server reads ECONNABORTED, the client ECONNRESET) and leaves any other.
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bpf/dataplane_fixture.h"
#include "bpf/loopback_connections.h"
#include "common/fd.h"
#include "dataplane/events.h"
#include "dataplane/idle_connections.h"
#include "edgeshed.skel.h"

namespace edgeshed::testing {
namespace {

using namespace std::chrono_literals;

uint64_t cookie_of(int fd) {
  uint64_t cookie = 0;
  socklen_t len = sizeof(cookie);
  EXPECT_EQ(getsockopt(fd, SOL_SOCKET, SO_COOKIE, &cookie, &len), 0) << strerror(errno);
  return cookie;
}

class ReclaimIdleTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    if (!dp_.skeleton().reclaims_idle()) {
      GTEST_SKIP() << "this kernel lacks bpf_sock_destroy() (6.5) or the request accounting (6.11)";
    }
    loopback_.emplace();
    ASSERT_TRUE(loopback_->entered());
    links_ = dp_.attach_request_tracking();
    dp_.count_this_netns_only();
    auto cfg = dp_.config();
    cfg.mode = EDGESHED_MODE_ENFORCE;
    dp_.set_config(cfg);
    read_every_event(dp_, reader_, events_);
    if (HasFatalFailure()) return;
    auto idle = IdleConnections::from_skeleton(dp_.skeleton());
    ASSERT_TRUE(idle) << idle.error().message;
    ASSERT_TRUE(idle->supported());
    idle_.emplace(std::move(*idle));
    listener_ = sockets().listen_on(&port_);
    set_requests(EDGESHED_REQUESTS_RECLAIM);
  }

  LoopbackSockets sockets() const { return LoopbackSockets(GetParam()); }
  Connection open() const { return sockets().open(listener_.get(), port_); }
  void set_requests(uint8_t requests) {
    ASSERT_TRUE(
        dp_.maps().set_ports({{port_, EDGESHED_CLASS_NORMAL, EDGESHED_PORT_TCP, requests}}));
  }

  std::vector<IdleConnection> listed() const {
    auto idle = idle_->list();
    if (!idle) {
      ADD_FAILURE() << idle.error().message;
      return {};
    }
    return *idle;
  }
  std::optional<IdleConnection> listed(const Connection& c) const {
    const uint64_t cookie = cookie_of(c.server.get());
    for (const IdleConnection& i : listed()) {
      if (i.cookie == cookie) return i;
    }
    return std::nullopt;
  }
  void reclaim(const Connection& c) const {
    auto s = idle_->reclaim({cookie_of(c.server.get())});
    ASSERT_TRUE(s) << s.error().message;
  }
  uint64_t counted(int counter) const { return dp_.stats().cls[EDGESHED_CLASS_NORMAL][counter]; }
  std::vector<edgeshed_event> events() {
    events_.clear();
    EXPECT_TRUE(reader_->poll(std::chrono::milliseconds(0)));
    return events_;
  }
  // Neither end was aborted: the server reads nothing and no error.
  static void expect_open(const Connection& c) {
    char byte;
    EXPECT_EQ(recv(c.server.get(), &byte, 1, MSG_DONTWAIT), -1);
    EXPECT_EQ(errno, EAGAIN) << strerror(errno);
    EXPECT_FALSE(was_reset(c.client.get(), 100ms));
  }

  DataplaneFixture dp_;
  std::optional<PrivateLoopback> loopback_;
  std::vector<BpfLink> links_;
  std::optional<EventReader> reader_;
  std::vector<edgeshed_event> events_;
  std::optional<IdleConnections> idle_;
  Fd listener_;
  uint16_t port_ = 0;
};

TEST_P(ReclaimIdleTest, AnAnsweredConnectionIsIdleSinceItsLastSegment) {
  const Connection c = open();
  serve_one_request(c);
  std::this_thread::sleep_for(50ms);
  const auto idle = listed(c);
  ASSERT_TRUE(idle) << "an answered keep-alive connection is idle";
  EXPECT_EQ(idle->port, port_);
  EXPECT_EQ(idle->group, static_cast<uint32_t>(EDGESHED_CLASS_NORMAL));
  EXPECT_GE(idle->idle, std::chrono::milliseconds(50));
  EXPECT_LT(idle->idle, std::chrono::seconds(5));
}

TEST_P(ReclaimIdleTest, AConnectionThatNeverSentIsIdle) {
  const Connection c = open();
  EXPECT_TRUE(listed(c));
}

TEST_P(ReclaimIdleTest, UnreadBytesAreNotIdle) {
  const Connection c = open();
  serve_one_request(c);
  send_request(c);
  EXPECT_FALSE(listed(c));
}

TEST_P(ReclaimIdleTest, ARequestReadAndNotAnsweredIsNotIdle) {
  const Connection c = open();
  serve_one_request(c);
  send_request(c);
  read_request(c);
  EXPECT_FALSE(listed(c));
}

TEST_P(ReclaimIdleTest, AnAnswerNotYetAcknowledgedIsNotIdle) {
  // The client takes in little and reads nothing: most of the answer stays
  // unsent or unacknowledged, though the request left service at its first
  // byte.
  const Connection c = open();
  serve_one_request(c);
  send_request(c);
  read_request(c);
  const std::string answer(4 << 20, 'x');
  ASSERT_GT(send(c.server.get(), answer.data(), answer.size(), MSG_NOSIGNAL | MSG_DONTWAIT), 0);
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(listed(c));
}

TEST_P(ReclaimIdleTest, AConnectionThatCarriedTwoRequestsAtOnceIsNeverIdle) {
  // A second request while the first is in service (pipelined, or two
  // HTTP/2 streams): the server reads both and answers the first. The
  // second is in service, unseen by the request count; once the answer is
  // acknowledged, nothing else tells the connection from an idle one.
  const Connection c = open();
  serve_one_request(c);
  carry_two_requests_at_once(c);
  EXPECT_FALSE(listed(c));
  // Answered in full, it stays out: the kernel cannot tell that it is.
  answer_request(c);
  std::this_thread::sleep_for(300ms);
  EXPECT_FALSE(listed(c));
}

TEST_P(ReclaimIdleTest, APortThatPassesIsNotListed) {
  set_requests(EDGESHED_REQUESTS_PASS);
  const Connection c = open();
  serve_one_request(c);
  EXPECT_FALSE(listed(c));
}

TEST_P(ReclaimIdleTest, TheChosenIdleConnectionIsAbortedAtBothEnds) {
  const Connection chosen = open();
  const Connection other = open();
  serve_one_request(chosen);
  serve_one_request(other);
  reclaim(chosen);
  EXPECT_TRUE(read_fails_with(chosen.server.get(), ECONNABORTED)) << "the server's socket aborted";
  EXPECT_TRUE(was_reset(chosen.client.get())) << "the client got a RST";
  expect_open(other);
  EXPECT_EQ(counted(EDGESHED_CTR_RECLAIMED), 1u);
  const auto evs = events();
  ASSERT_EQ(evs.size(), 1u);
  EXPECT_EQ(evs[0].outcome, EDGESHED_EVENT_RECLAIMED);
  EXPECT_EQ(evs[0].reason, EDGESHED_REASON_IDLE);
  EXPECT_EQ(evs[0].sport, local_port(chosen.client.get()));
  EXPECT_EQ(evs[0].dport, port_);
  EXPECT_EQ(evs[0].family, GetParam());
  EXPECT_FALSE(listed(chosen)) << "gone from the walk";
}

TEST_P(ReclaimIdleTest, AChosenConnectionWithARequestSinceIsLeftOpen) {
  const Connection c = open();
  serve_one_request(c);
  ASSERT_TRUE(listed(c));
  send_request(c);  // between the daemon's choice and the reclaim walk
  reclaim(c);
  read_request(c);
  EXPECT_FALSE(read_fails_with(c.server.get(), ECONNABORTED, 50ms));
  EXPECT_FALSE(was_reset(c.client.get(), 50ms));
  EXPECT_EQ(counted(EDGESHED_CTR_RECLAIMED), 0u);
  EXPECT_TRUE(events().empty());
}

TEST_P(ReclaimIdleTest, ObserveModeCountsWhatItWouldReclaim) {
  auto cfg = dp_.config();
  cfg.mode = EDGESHED_MODE_OBSERVE;
  dp_.set_config(cfg);
  const Connection c = open();
  serve_one_request(c);
  reclaim(c);
  expect_open(c);
  EXPECT_EQ(counted(EDGESHED_CTR_RECLAIMED), 0u);
  EXPECT_EQ(counted(EDGESHED_CTR_WOULD_RECLAIM), 1u);
  const auto evs = events();
  ASSERT_EQ(evs.size(), 1u);
  EXPECT_EQ(evs[0].outcome, EDGESHED_EVENT_WOULD_RECLAIM);
}

INSTANTIATE_TEST_SUITE_P(Families, ReclaimIdleTest, ::testing::Values(AF_INET, AF_INET6),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return info.param == AF_INET ? "ipv4" : "ipv6";
                         });

}  // namespace
}  // namespace edgeshed::testing
