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

#include "common/fd.h"
#include "common/loopback.h"

namespace edgeshed {
namespace {

void connect_to(std::vector<Fd>& clients, int family, uint16_t port, int n) {
  for (int i = 0; i < n; ++i) clients.push_back(testing::connect_loopback(family, port));
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
  uint16_t p4 = 0, p6 = 0;
  Fd v4 = testing::listen_on_loopback(AF_INET, &p4, 7);
  Fd v6 = testing::listen_on_loopback(AF_INET6, &p6, 9);
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
  uint16_t port = 0;
  Fd l = testing::listen_on_loopback(AF_INET, &port, 4);
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
