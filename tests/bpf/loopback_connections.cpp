#include "bpf/loopback_connections.h"

#include <arpa/inet.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "edgeshed.skel.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace edgeshed::testing {

namespace {
void loopback_up() {
  Fd s(socket(AF_INET, SOCK_DGRAM, 0));
  ASSERT_TRUE(s.valid());
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
  ASSERT_EQ(ioctl(s.get(), SIOCGIFFLAGS, &ifr), 0) << strerror(errno);
  ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP);
  ASSERT_EQ(ioctl(s.get(), SIOCSIFFLAGS, &ifr), 0) << strerror(errno);
}
}  // namespace

void read_every_event(const DataplaneFixture& dp, std::optional<EventReader>& reader,
                      std::vector<edgeshed_event>& events) {
  auto cfg = dp.config();
  cfg.events_per_sec_per_cpu = 100;
  cfg.event_sample = 1;
  dp.set_config(cfg);
  auto r = EventReader::from_fd(
      Fd(fcntl(bpf_map__fd(dp.skeleton()->maps.es_events), F_DUPFD_CLOEXEC, 0)),
      [&events](const edgeshed_event& ev) { events.push_back(ev); });
  ASSERT_TRUE(r) << r.error().message;
  reader.emplace(std::move(*r));
}

uint16_t local_port(int fd) {
  sockaddr_storage a{};
  socklen_t len = sizeof(a);
  EXPECT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len), 0);
  return ntohs(a.ss_family == AF_INET ? reinterpret_cast<sockaddr_in*>(&a)->sin_port
                                      : reinterpret_cast<sockaddr_in6*>(&a)->sin6_port);
}

bool read_fails_with(int fd, int err, std::chrono::milliseconds wait) {
  char c;
  const auto deadline = std::chrono::steady_clock::now() + wait;
  do {
    const ssize_t n = recv(fd, &c, 1, MSG_DONTWAIT);
    if (n < 0 && errno == err) return true;
    if (n >= 0 || errno != EAGAIN) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  } while (std::chrono::steady_clock::now() < deadline);
  return false;
}

PrivateLoopback::PrivateLoopback()
    : host_netns_(open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC)) {
  if (!host_netns_.valid()) return;
  if (unshare(CLONE_NEWNET) != 0) {
    ADD_FAILURE() << "unshare(CLONE_NEWNET): " << strerror(errno);
    host_netns_ = Fd();
    return;
  }
  loopback_up();
  const std::string setup = std::string("ip addr add ") + kTestV4 +
                            "/32 dev lo && sysctl -qw net.ipv4.conf.all.accept_local=1 "
                            "net.ipv4.conf.lo.accept_local=1";
  entered_ = std::system(setup.c_str()) == 0;
}

PrivateLoopback::~PrivateLoopback() {
  if (host_netns_.valid()) {
    EXPECT_EQ(setns(host_netns_.get(), CLONE_NEWNET), 0) << strerror(errno);
  }
}

sockaddr_storage LoopbackSockets::address(uint16_t port) const {
  sockaddr_storage a{};
  if (family_ == AF_INET) {
    auto* in = reinterpret_cast<sockaddr_in*>(&a);
    in->sin_family = AF_INET;
    in->sin_port = htons(port);
    inet_pton(AF_INET, kTestV4, &in->sin_addr);
  } else {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&a);
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(port);
    in6->sin6_addr = in6addr_loopback;
  }
  return a;
}

socklen_t LoopbackSockets::address_len() const {
  return family_ == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
}

Fd LoopbackSockets::listen_on(uint16_t* port) const {
  Fd fd(socket(family_, SOCK_STREAM | SOCK_CLOEXEC, 0));
  EXPECT_TRUE(fd.valid());
  sockaddr_storage a = address(0);
  EXPECT_EQ(bind(fd.get(), reinterpret_cast<sockaddr*>(&a), address_len()), 0) << strerror(errno);
  EXPECT_EQ(listen(fd.get(), 64), 0);
  *port = local_port(fd.get());
  return fd;
}

Fd LoopbackSockets::connect_to(uint16_t port) const {
  Fd fd(socket(family_, SOCK_STREAM | SOCK_CLOEXEC, 0));
  EXPECT_TRUE(fd.valid());
  sockaddr_storage a = address(port);
  EXPECT_EQ(connect(fd.get(), reinterpret_cast<sockaddr*>(&a), address_len()), 0)
      << strerror(errno);
  return fd;
}

Connection LoopbackSockets::open(int listener, uint16_t port) const {
  Connection c;
  c.client = connect_to(port);
  c.server = Fd(accept(listener, nullptr, nullptr));
  EXPECT_TRUE(c.server.valid()) << strerror(errno);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  return c;
}

void send_request(const Connection& c, int times) {
  std::string requests;
  for (int i = 0; i < times; ++i) requests += kRequest;
  ASSERT_EQ(send(c.client.get(), requests.data(), requests.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(requests.size()));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

void read_request(const Connection& c) {
  std::string buf(kRequest.size(), '\0');
  ASSERT_EQ(recv(c.server.get(), buf.data(), buf.size(), MSG_WAITALL),
            static_cast<ssize_t>(kRequest.size()));
}

void answer_request(const Connection& c) {
  ASSERT_EQ(send(c.server.get(), kAnswer.data(), kAnswer.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(kAnswer.size()));
  std::string answer(kAnswer.size(), '\0');
  ASSERT_EQ(recv(c.client.get(), answer.data(), answer.size(), MSG_WAITALL),
            static_cast<ssize_t>(kAnswer.size()));
}

void serve_one_request(const Connection& c) {
  ASSERT_NO_FATAL_FAILURE(send_request(c));
  ASSERT_NO_FATAL_FAILURE(read_request(c));
  ASSERT_NO_FATAL_FAILURE(answer_request(c));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

void carry_two_requests_at_once(const Connection& c) {
  ASSERT_NO_FATAL_FAILURE(send_request(c));
  ASSERT_NO_FATAL_FAILURE(send_request(c));
  ASSERT_NO_FATAL_FAILURE(read_request(c));
  ASSERT_NO_FATAL_FAILURE(read_request(c));
  ASSERT_NO_FATAL_FAILURE(answer_request(c));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
}

}  // namespace edgeshed::testing
