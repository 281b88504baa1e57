// Real TCP connections on loopback to a protected port whose sockets the
// tracker counts (request_count_test.cpp, request_age_test.cpp): a listener
// of class normal beside kNormalPort, and the requests and answers the tests
// send on them.
#pragma once

#include <gtest/gtest.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bpf/dataplane_fixture.h"
#include "common/fd.h"
#include "common/loopback.h"
#include "common/test_cgroup.h"

namespace edgeshed::testing {

inline constexpr char kHttpRequest[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
inline constexpr size_t kHttpRequestBytes = sizeof(kHttpRequest) - 1;
inline constexpr char kHttpResponse[] = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
inline constexpr size_t kHttpResponseBytes = sizeof(kHttpResponse) - 1;

inline void send_bytes(int fd, const char* bytes, size_t n) {
  ASSERT_EQ(send(fd, bytes, n, MSG_NOSIGNAL), static_cast<ssize_t>(n));
}
inline void send_request(int fd) { send_bytes(fd, kHttpRequest, kHttpRequestBytes); }
inline void send_response(int fd) { send_bytes(fd, kHttpResponse, kHttpResponseBytes); }
// Reads exactly n bytes (the test's messages are small: one recv each,
// unless they were coalesced, which MSG_WAITALL with an exact size handles).
inline void read_bytes(int fd, size_t n) {
  std::string buf(n, '\0');
  ASSERT_EQ(recv(fd, buf.data(), n, MSG_WAITALL), static_cast<ssize_t>(n));
}
inline void reset_on_close(int fd) {
  linger l{1, 0};
  ASSERT_EQ(setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l)), 0);
}

class TrackedLoopbackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    link_request_tracking(dp_, links_);
    if (IsSkipped() || HasFatalFailure()) return;
    dp_.count_this_netns_only();
    listener_ = listen_on_loopback(AF_INET, &port_, 512);
    ASSERT_TRUE(dp_.maps().set_ports(
        {{kNormalPort, EDGESHED_CLASS_NORMAL}, {port_, EDGESHED_CLASS_NORMAL}}));
  }

  // The listener made again inside a test cgroup (the sockets it accepts
  // are the cgroup's, the clients' are not), both kinds of timer linked,
  // and the port timed by `timers` (enum edgeshed_port_timers): the other
  // kind must leave it alone.
  void time_by(uint8_t timers) {
    std::string why;
    cgroup_ = TestCgroup::create(&why);
    ASSERT_TRUE(cgroup_) << why;
    listener_ = cgroup_->inside([this] { return listen_on_loopback(AF_INET, &port_, 512); });
    link_cgroup_timers();
    PortClass timed{port_, EDGESHED_CLASS_NORMAL};
    timed.timers = timers;
    ASSERT_TRUE(dp_.maps().set_ports({{kNormalPort, EDGESHED_CLASS_NORMAL}, timed}));
  }
  // The cgroup's timers, where the port is timed there.
  void link_cgroup_timers() {
    if (!cgroup_) return;
    for (auto& l : dp_.attach_cgroup_timers(cgroup_->fd())) links_.push_back(std::move(l));
  }

  struct Pair {
    Fd client, server;
  };
  Pair open_pair() {
    Pair p;
    p.client = connect_loopback(AF_INET, port_);
    p.server = Fd(accept(listener_.get(), nullptr, nullptr));
    EXPECT_TRUE(p.server.valid());
    return p;
  }

  DataplaneFixture dp_;
  std::optional<TestCgroup> cgroup_;  // removed after the links
  std::vector<BpfLink> links_;
  Fd listener_;
  uint16_t port_ = 0;
};

}  // namespace edgeshed::testing
