// A protected port whose service lives in another network namespace (a
// container's, behind this host's interface): the tracker counts that
// namespace's connections of the port, and not the same port's elsewhere,
// on real loopback connections in two namespaces. And a port served in two
// namespaces (two pods on one port) is two services, counted and capped
// apart.
#include <gtest/gtest.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <fcntl.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "bpf/dataplane_fixture.h"
#include "bpf/tracked_loopback.h"
#include "common/fd.h"
#include "common/loopback.h"
#include "common/wait_until.h"

namespace edgeshed::testing {
namespace {

using namespace std::chrono_literals;

// The namespace's inode, as the tracker reads it (ns.inum).
uint32_t netns_inode(int ns_fd) {
  struct stat st {};
  EXPECT_EQ(fstat(ns_fd, &st), 0);
  return static_cast<uint32_t>(st.st_ino);
}

// The cookie of the calling thread's namespace, as the data plane reads it
// (net->net_cookie).
uint64_t netns_cookie_here() {
  Fd s(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  uint64_t cookie = 0;
  socklen_t len = sizeof(cookie);
  EXPECT_EQ(getsockopt(s.get(), SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &len), 0) << strerror(errno);
  return cookie;
}

// A listener on 127.0.0.1:port of the calling thread's namespace.
Fd listen_on_port(uint16_t port) {
  Fd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  const int one = 1;
  EXPECT_EQ(setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)), 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0) << strerror(errno);
  EXPECT_EQ(listen(fd.get(), 64), 0);
  return fd;
}

// A fresh namespace for the test's thread while it lives (sockets made
// meanwhile stay in it), with its loopback up; the thread's own namespace
// again after.
class OtherNamespace {
 public:
  OtherNamespace() : home_(open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC)) {
    EXPECT_TRUE(home_.valid());
    if (unshare(CLONE_NEWNET) != 0) {
      ADD_FAILURE() << "unshare(CLONE_NEWNET): " << strerror(errno);
      return;
    }
    self_ = Fd(open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC));
    Fd s(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    ifreq ifr{};
    std::strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
    EXPECT_EQ(ioctl(s.get(), SIOCGIFFLAGS, &ifr), 0);
    ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP);
    EXPECT_EQ(ioctl(s.get(), SIOCSIFFLAGS, &ifr), 0);
    cookie_ = netns_cookie_here();
  }
  ~OtherNamespace() { leave(); }
  OtherNamespace(const OtherNamespace&) = delete;
  OtherNamespace& operator=(const OtherNamespace&) = delete;

  void leave() {
    if (home_.valid()) {
      EXPECT_EQ(setns(home_.get(), CLONE_NEWNET), 0);
    }
    home_ = Fd();
  }
  uint32_t inode() const { return netns_inode(self_.get()); }
  uint64_t cookie() const { return cookie_; }

 private:
  Fd home_;
  Fd self_;
  uint64_t cookie_ = 0;
};

class ServiceNetnsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    link_request_tracking(dp_, links_);
    if (IsSkipped() || HasFatalFailure()) return;
    dp_.count_this_netns_only();
  }

  struct Side {
    Fd listener;
    std::vector<Fd> clients, servers;
  };
  // n connections to the listener, each with a request the server has
  // not answered: n in service.
  static void open_requests(Side& side, uint16_t port, int n) {
    for (int i = 0; i < n; ++i) {
      side.clients.push_back(connect_loopback(AF_INET, port));
      side.servers.push_back(Fd(accept(side.listener.get(), nullptr, nullptr)));
      send_request(side.clients.back().get());
    }
  }

  // The port protected, its service in namespace netns.
  void protect(uint16_t port, uint32_t netns) {
    ASSERT_TRUE(dp_.maps().set_ports(
        {{port, EDGESHED_CLASS_NORMAL, EDGESHED_PORT_TCP, EDGESHED_REQUESTS_PASS, netns}}));
  }
  // A pod in ns, on a new loopback port it serves, with n requests in service.
  Side pod_serving(const OtherNamespace& ns, uint16_t& port, int n) {
    Side side;
    side.listener = listen_on_loopback(AF_INET, &port, 64);
    protect(port, ns.inode());
    open_requests(side, port, n);
    expect_counted(port, n, n);
    return side;
  }
  // A pod gone: its connections reset with it.
  static void reset_all(Side& side) {
    for (const auto& c : side.clients) reset_on_close(c.get());
    side = Side{};
  }

  void expect_counted(uint16_t port, uint64_t in_service, uint64_t connections) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    uint64_t inflight = 0, conns = 0;
    do {
      inflight = dp_.maps().read_inflight_port(port).value();
      conns = dp_.maps().read_connection_port(port).value();
      if (inflight == in_service && conns == connections) return;
      std::this_thread::sleep_for(5ms);
    } while (std::chrono::steady_clock::now() < deadline);
    EXPECT_EQ(inflight, in_service) << "requests in service";
    EXPECT_EQ(conns, connections) << "connections";
  }

  DataplaneFixture dp_;
  std::vector<BpfLink> links_;
};

TEST_F(ServiceNetnsTest, ThePortIsCountedInItsOwnNamespaceOnly) {
  Side pod, host;
  uint16_t port = 0;
  OtherNamespace ns;
  pod.listener = listen_on_loopback(AF_INET, &port, 64);
  const uint32_t pod_ns = ns.inode();
  protect(port, pod_ns);
  open_requests(pod, port, 3);
  ns.leave();
  host.listener = listen_on_port(port);
  open_requests(host, port, 5);
  // The pod's 3, not the host's 5 on the same port.
  expect_counted(port, 3, 3);
  EXPECT_EQ(dp_.maps().read_inflight_classes().value()[EDGESHED_CLASS_NORMAL], 3u);

  // Answered and closed in the pod: nothing left, the host's still uncounted.
  for (auto& s : pod.servers) {
    read_bytes(s.get(), kHttpRequestBytes);
    send_response(s.get());
  }
  expect_counted(port, 0, 3);
  pod.servers.clear();
  pod.clients.clear();
  expect_counted(port, 0, 0);
}

TEST_F(ServiceNetnsTest, WithoutANamespaceThePortIsTheInterfaces) {
  Side pod, host;
  uint16_t port = 0;
  OtherNamespace ns;
  pod.listener = listen_on_loopback(AF_INET, &port, 64);
  ASSERT_TRUE(dp_.maps().set_ports({{port, EDGESHED_CLASS_NORMAL}}));
  open_requests(pod, port, 3);
  ns.leave();
  host.listener = listen_on_port(port);
  open_requests(host, port, 5);
  expect_counted(port, 5, 5);
}

// A pod removed: its namespace's inode is no longer the port's service,
// and a new pod on the same port is counted from its own connections on.
TEST_F(ServiceNetnsTest, ANewNamespaceOnThePortStartsFromItsOwnConnections) {
  uint16_t port = 0;
  Side first;
  {
    OtherNamespace ns;
    first = pod_serving(ns, port, 4);
  }
  // The pod dies: its connections are reset with it.
  reset_all(first);
  expect_counted(port, 0, 0);

  Side second;
  OtherNamespace ns;
  second.listener = listen_on_port(port);
  protect(port, ns.inode());
  open_requests(second, port, 2);
  ns.leave();
  expect_counted(port, 2, 2);
}

// The daemon may see a pod's namespace go (the port then names
// EDGESHED_NETNS_NONE) before the pod's sockets close: nothing new is
// counted, and what was counted is still uncounted as it closes.
TEST_F(ServiceNetnsTest, AGoneNamespaceCountsNothingNewAndUncountsWhatItCounted) {
  uint16_t port = 0;
  OtherNamespace ns;
  Side pod = pod_serving(ns, port, 3);
  protect(port, EDGESHED_NETNS_NONE);
  open_requests(pod, port, 2);
  // Nothing to wait for: the time a wrong count would take to show.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  expect_counted(port, 3, 3);
  reset_all(pod);
  ns.leave();
  expect_counted(port, 0, 0);
}

// Two pods serving one port are two services: each one's requests and
// connections are its own group's, whatever the other's, and the host's
// sockets of the same port are neither's.
TEST_F(ServiceNetnsTest, TwoNamespacesOnOnePortAreTwoServices) {
  constexpr uint32_t kFirst = 1, kSecond = 2;
  const uint32_t first = edgeshed_group(kFirst, EDGESHED_CLASS_NORMAL);
  const uint32_t second = edgeshed_group(kSecond, EDGESHED_CLASS_BACKGROUND);
  uint16_t port = 0;
  Side a, b, host;
  {
    OtherNamespace ns;
    a.listener = listen_on_loopback(AF_INET, &port, 64);
    dp_.serve_in_namespace(port, EDGESHED_CLASS_NORMAL, ns.cookie(), kFirst);
    open_requests(a, port, 3);
  }
  {
    OtherNamespace ns;
    b.listener = listen_on_port(port);
    dp_.serve_in_namespace(port, EDGESHED_CLASS_BACKGROUND, ns.cookie(), kSecond);
    open_requests(b, port, 5);
  }
  host.listener = listen_on_port(port);
  open_requests(host, port, 2);
  const auto expect_groups = [&](uint64_t in_first, uint64_t conns_first, uint64_t in_second,
                                 uint64_t conns_second, const char* when) {
    EXPECT_TRUE(wait_until(
        [&] {
          return dp_.group_inflight(first) == in_first &&
                 dp_.group_connections(first) == conns_first &&
                 dp_.group_inflight(second) == in_second &&
                 dp_.group_connections(second) == conns_second;
        },
        3s))
        << when << ": first " << dp_.group_inflight(first) << "/" << dp_.group_connections(first)
        << ", second " << dp_.group_inflight(second) << "/" << dp_.group_connections(second);
    for (uint32_t c = 0; c < EDGESHED_NUM_CLASSES; ++c) {
      EXPECT_EQ(dp_.group_connections(c), 0u) << when << ": the host's are no service's";
    }
  };
  expect_groups(3, 3, 5, 5, "both serving");
  // The port's own count sums its services.
  expect_counted(port, 8, 8);

  for (auto& s : a.servers) {
    read_bytes(s.get(), kHttpRequestBytes);
    send_response(s.get());
  }
  expect_groups(0, 3, 5, 5, "the first answered");
  reset_all(b);
  expect_groups(0, 3, 0, 0, "the second gone");
}

// A SYN to a port served in two namespaces is decided by the service its
// destination's namespace runs there: one at its cap sheds its own SYNs,
// not the other's; a destination in no service's namespace passes.
TEST(TwoServicesOnOnePort, ASynIsDecidedByItsDestinationsService) {
  constexpr uint64_t kFirstCookie = 1001, kSecondCookie = 1002;
  constexpr uint32_t kFirst = 3, kSecond = 7, kCap = 4;
  constexpr const char* kFirstAddress = "198.51.100.11";
  constexpr const char* kSecondAddress = "198.51.100.12";
  for (const Entry entry : {Entry::kXdp, Entry::kTc}) {
    SCOPED_TRACE(entry == Entry::kXdp ? "xdp" : "tc");
    DataplaneFixture dp;
    dp.serve_in_namespace(kNormalPort, EDGESHED_CLASS_NORMAL, kFirstCookie, kFirst);
    dp.serve_in_namespace(kNormalPort, EDGESHED_CLASS_NORMAL, kSecondCookie, kSecond);
    dp.set_destination_v4(kFirstAddress, kFirstCookie);
    dp.set_destination_v4(kSecondAddress, kSecondCookie);
    const edgeshed_class_policy capped = {0, kCap, 0, 0, 0, 0};
    for (const uint32_t service : {0u, kFirst, kSecond}) {
      dp.set_class_policy(edgeshed_group(service, EDGESHED_CLASS_NORMAL), capped);
    }
    dp.set_inflight(edgeshed_group(kFirst, EDGESHED_CLASS_NORMAL), kCap);
    dp.set_inflight(EDGESHED_CLASS_NORMAL, kCap);  // service 0's: not this port's

    const auto syn_to = [](const char* address) {
      return PacketBuilder::syn_v4(40000, kNormalPort, "192.0.2.1", address).build();
    };
    auto before = dp.stats();
    EXPECT_EQ(dp.run(entry, syn_to(kFirstAddress)).verdict, Verdict::kDrop) << "at its cap";
    EXPECT_EQ(dp.run(entry, syn_to(kSecondAddress)).verdict, Verdict::kPass) << "under its own";
    auto after = dp.stats();
    EXPECT_EQ(class_delta(after, before, EDGESHED_CLASS_NORMAL, EDGESHED_CTR_SHED_CAP), 1u);
    EXPECT_EQ(class_delta(after, before, EDGESHED_CLASS_NORMAL, EDGESHED_CTR_ADMITTED), 1u);

    before = after;
    EXPECT_EQ(dp.run(entry, syn_to("198.51.100.13")).verdict, Verdict::kPass)
        << "no service's namespace";
    after = dp.stats();
    EXPECT_EQ(global_delta(after, before, EDGESHED_GCTR_UNPROTECTED), 1u);
    EXPECT_EQ(all_class_counters(after), all_class_counters(before));
  }
}

}  // namespace
}  // namespace edgeshed::testing
