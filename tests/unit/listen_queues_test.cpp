// The listeners' accept queues from sock_diag, against real loopback
// listeners of both families: what `ss -ltn` calls Recv-Q and Send-Q.
#include "dataplane/listen_queues.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <optional>
#include <thread>
#include <vector>

#include "dataplane/fd.h"

namespace edgeshed {
namespace {

// A listener on an ephemeral loopback port; returns its port.
uint16_t listen_on(Fd& fd, int family, int backlog) {
  fd = Fd(socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_storage ss{};
  socklen_t len;
  if (family == AF_INET) {
    auto* a = reinterpret_cast<sockaddr_in*>(&ss);
    a->sin_family = AF_INET;
    a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    len = sizeof(*a);
  } else {
    auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
    a->sin6_family = AF_INET6;
    a->sin6_addr = in6addr_loopback;
    len = sizeof(*a);
  }
  EXPECT_EQ(bind(fd.get(), reinterpret_cast<sockaddr*>(&ss), len), 0);
  EXPECT_EQ(listen(fd.get(), backlog), 0);
  getsockname(fd.get(), reinterpret_cast<sockaddr*>(&ss), &len);
  return ntohs(family == AF_INET ? reinterpret_cast<sockaddr_in*>(&ss)->sin_port
                                 : reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
}

void connect_to(std::vector<Fd>& clients, int family, uint16_t port, int n) {
  for (int i = 0; i < n; ++i) {
    Fd c(socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0));
    int rc;
    if (family == AF_INET) {
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      a.sin_port = htons(port);
      rc = connect(c.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a));
    } else {
      sockaddr_in6 a{};
      a.sin6_family = AF_INET6;
      a.sin6_addr = in6addr_loopback;
      a.sin6_port = htons(port);
      rc = connect(c.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a));
    }
    ASSERT_EQ(rc, 0);
    clients.push_back(std::move(c));
  }
}

std::optional<ListenQueue> find(uint16_t port) {
  auto all = read_listen_queues();
  EXPECT_TRUE(all) << all.error().message;
  if (!all) return std::nullopt;
  for (const auto& q : *all) {
    if (q.port == port) return q;
  }
  return std::nullopt;
}

TEST(ListenQueues, DepthAndBacklogOfIpv4AndIpv6Listeners) {
  Fd v4, v6;
  const uint16_t p4 = listen_on(v4, AF_INET, 7);
  const uint16_t p6 = listen_on(v6, AF_INET6, 9);
  std::vector<Fd> clients;
  connect_to(clients, AF_INET, p4, 3);
  connect_to(clients, AF_INET6, p6, 2);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  auto q4 = find(p4);
  auto q6 = find(p6);
  ASSERT_TRUE(q4 && q6);
  EXPECT_EQ(q4->depth, 3u);
  EXPECT_EQ(q4->max_depth, 7u);
  EXPECT_EQ(q6->depth, 2u);
  EXPECT_EQ(q6->max_depth, 9u);
  Fd accepted(accept(v4.get(), nullptr, nullptr));
  EXPECT_EQ(find(p4)->depth, 2u);
}

TEST(ListenQueues, ConnectedSocketsAreNotListed) {
  Fd l;
  const uint16_t port = listen_on(l, AF_INET, 4);
  std::vector<Fd> clients;
  connect_to(clients, AF_INET, port, 1);
  auto all = read_listen_queues();
  ASSERT_TRUE(all);
  int seen = 0;
  for (const auto& q : *all) seen += q.port == port;
  EXPECT_EQ(seen, 1);  // the listener, not the two ends of the connection
}

}  // namespace
}  // namespace edgeshed
