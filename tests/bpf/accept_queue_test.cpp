// The accept-queue iterator against real loopback connections: depth and
// sojourn time read back, growing while nobody accepts, zero after accept.
#include "dataplane/accept_queue.h"

#include <arpa/inet.h>
#include <bpf/libbpf.h>
#include <gtest/gtest.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "bpf/dataplane_fixture.h"
#include "common/fd.h"
#include "edgeshed.skel.h"
#include "signals/accept_queue_signal.h"

namespace edgeshed::testing {
namespace {

using namespace std::chrono_literals;

struct LinkDeleter {
  void operator()(bpf_link* l) const { bpf_link__destroy(l); }
};

constexpr int kBacklog = 16;

class AcceptQueueTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tracker_.reset(bpf_program__attach(dp_.skeleton()->progs.edgeshed_track));
    ASSERT_TRUE(tracker_);
    auto r = AcceptQueueReader::open(bpf_map__fd(dp_.skeleton()->maps.es_ports),
                                     bpf_map__fd(dp_.skeleton()->maps.es_sk_state));
    ASSERT_TRUE(r) << r.error().message;
    reader_.emplace(std::move(*r));

    listener_ = Fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(a);
    ASSERT_EQ(bind(listener_.get(), reinterpret_cast<sockaddr*>(&a), len), 0);
    ASSERT_EQ(listen(listener_.get(), kBacklog), 0);
    getsockname(listener_.get(), reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    addr_ = a;
    ASSERT_TRUE(dp_.maps().set_ports({{port_, EDGESHED_CLASS_NORMAL}}));
  }

  void connect_clients(int n) {
    for (int i = 0; i < n; ++i) {
      Fd c(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
      ASSERT_EQ(connect(c.get(), reinterpret_cast<sockaddr*>(&addr_), sizeof(addr_)), 0);
      clients_.push_back(std::move(c));
    }
  }

  signals::PortQueue queue() {
    auto snap = reader_->read();
    EXPECT_TRUE(snap) << snap.error().message;
    auto it = snap->find(port_);
    return it == snap->end() ? signals::PortQueue{} : it->second;
  }

  DataplaneFixture dp_;
  std::unique_ptr<bpf_link, LinkDeleter> tracker_;
  std::optional<AcceptQueueReader> reader_;
  Fd listener_;
  sockaddr_in addr_{};
  uint16_t port_ = 0;
  std::vector<Fd> clients_;
};

TEST_F(AcceptQueueTest, EmptyListenerReportsItsBacklog) {
  auto q = queue();
  EXPECT_EQ(q.depth, 0u);
  EXPECT_EQ(q.max_depth, static_cast<uint32_t>(kBacklog));
  EXPECT_EQ(q.waiting, 0u);
  EXPECT_EQ(q.oldest_ns, 0u);
}

TEST_F(AcceptQueueTest, DepthAndSojournGrowWhileNobodyAccepts) {
  connect_clients(5);
  std::this_thread::sleep_for(50ms);
  auto first = queue();
  EXPECT_EQ(first.depth, 5u);
  EXPECT_EQ(first.waiting, 5u);
  EXPECT_GE(first.oldest_ns, 40'000'000u);   // at least the 50 ms slept, less slack
  EXPECT_LT(first.oldest_ns, 2'000'000'000u);

  std::this_thread::sleep_for(200ms);
  auto later = queue();
  EXPECT_EQ(later.depth, 5u);
  EXPECT_GE(later.oldest_ns, first.oldest_ns + 150'000'000u);

  // As a signal: sojourn in seconds, depth, fill.
  signals::QueueSnapshot snap{{port_, later}};
  using M = signals::AcceptQueueSignal::Measure;
  EXPECT_NEAR(signals::AcceptQueueSignal::value_of(snap, M::kSojourn, port_),
              later.oldest_ns / 1e9, 1e-9);
  EXPECT_EQ(signals::AcceptQueueSignal::value_of(snap, M::kDepth, std::nullopt), 5.0);
  EXPECT_NEAR(signals::AcceptQueueSignal::value_of(snap, M::kFill, port_), 5.0 / kBacklog, 1e-9);
}

TEST_F(AcceptQueueTest, BackToZeroAfterAccept) {
  connect_clients(4);
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(queue().depth, 4u);
  std::vector<Fd> accepted;
  accepted.reserve(3);
  for (int i = 0; i < 3; ++i) accepted.emplace_back(accept(listener_.get(), nullptr, nullptr));
  auto q = queue();
  EXPECT_EQ(q.depth, 1u);
  EXPECT_EQ(q.waiting, 1u);
  accepted.emplace_back(accept(listener_.get(), nullptr, nullptr));
  q = queue();
  EXPECT_EQ(q.depth, 0u);
  EXPECT_EQ(q.waiting, 0u);
  EXPECT_EQ(q.oldest_ns, 0u);
}

// The walk over every TCP socket is the daemon's largest cost per tick: it
// runs only when a protected listener's queue holds a connection.
TEST_F(AcceptQueueTest, AnEmptyQueueNeedsNoWalk) {
  const uint64_t before = reader_->walks();
  auto q = queue();
  EXPECT_EQ(q.max_depth, static_cast<uint32_t>(kBacklog));
  EXPECT_EQ(reader_->walks(), before);
  connect_clients(2);
  std::this_thread::sleep_for(20ms);
  q = queue();
  EXPECT_EQ(q.depth, 2u);
  EXPECT_EQ(q.waiting, 2u);
  EXPECT_GT(q.oldest_ns, 0u);
  EXPECT_EQ(reader_->walks(), before + 1);
}

TEST_F(AcceptQueueTest, UnprotectedPortsAreNotReported) {
  ASSERT_TRUE(dp_.maps().set_ports({}));
  connect_clients(2);
  auto snap = reader_->read();
  ASSERT_TRUE(snap);
  EXPECT_EQ(snap->count(port_), 0u);
}

// A port whose service is a container's: read inside its namespace, the
// pod's queue; read in the interface's, nothing of that port, although a
// listener of the host's holds it there too.
TEST_F(AcceptQueueTest, AContainersPortIsReadInItsNamespaceOnly) {
  Fd home(open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(home.valid());
  struct GoHome {
    int fd;
    ~GoHome() { setns(fd, CLONE_NEWNET); }
  } go_home{home.get()};  // also when an assertion ends the test early
  ASSERT_EQ(unshare(CLONE_NEWNET), 0) << strerror(errno);
  Fd pod_ns(open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC));
  ASSERT_EQ(std::system("ip link set lo up"), 0);
  struct stat st {};
  ASSERT_EQ(fstat(pod_ns.get(), &st), 0);
  const auto pod = static_cast<uint32_t>(st.st_ino);
  ASSERT_TRUE(dp_.maps().set_ports(
      {{port_, EDGESHED_CLASS_NORMAL, EDGESHED_PORT_TCP, EDGESHED_REQUESTS_PASS, pod}}));
  Fd pod_listener(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  ASSERT_EQ(bind(pod_listener.get(), reinterpret_cast<sockaddr*>(&addr_), sizeof(addr_)), 0);
  ASSERT_EQ(listen(pod_listener.get(), kBacklog), 0);
  connect_clients(3);
  std::this_thread::sleep_for(20ms);
  auto in_pod = reader_->read(pod);
  ASSERT_TRUE(in_pod) << in_pod.error().message;
  ASSERT_EQ(in_pod->count(port_), 1u);
  EXPECT_EQ(in_pod->at(port_).depth, 3u);
  EXPECT_EQ(in_pod->at(port_).waiting, 3u) << "counted in the pod's namespace";
  EXPECT_GT(in_pod->at(port_).oldest_ns, 0u);

  ASSERT_EQ(setns(home.get(), CLONE_NEWNET), 0) << strerror(errno);
  auto here = reader_->read();
  ASSERT_TRUE(here) << here.error().message;
  EXPECT_EQ(here->count(port_), 0u) << "the host's listener on the pod's port";
  clients_.clear();
}

}  // namespace
}  // namespace edgeshed::testing
