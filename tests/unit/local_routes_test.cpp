// The host's local routes from the kernel's local table: loopback's are in
// every network namespace.
#include "dataplane/local_routes.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace edgeshed {
namespace {

bool has(const std::vector<IpPrefix>& routes, const char* text) {
  const auto want = parse_ip_prefix(text).value();
  return std::find(routes.begin(), routes.end(), want) != routes.end();
}

TEST(LocalRoutesTest, LoopbacksAddressesAndNetworkAreLocal) {
  auto routes = read_local_routes();
  ASSERT_TRUE(routes) << routes.error().message;
  EXPECT_TRUE(has(*routes, "127.0.0.1/32"));
  EXPECT_TRUE(has(*routes, "127.0.0.0/8")) << "loopback's whole network is routed locally";
  EXPECT_FALSE(has(*routes, "127.255.255.255/32")) << "a broadcast route is no local one";
}

TEST(LocalRoutesTest, EachRouteOnce) {
  auto routes = read_local_routes();
  ASSERT_TRUE(routes) << routes.error().message;
  auto sorted = *routes;
  EXPECT_EQ(std::unique(sorted.begin(), sorted.end()), sorted.end());
}

}  // namespace
}  // namespace edgeshed
