// The connection tracker against real loopback connections: counted while
// established (accepted or still queued), uncounted however they end.
#include <arpa/inet.h>
#include <bpf/libbpf.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "bpf/dataplane_fixture.h"
#include "common/fd.h"
#include "common/loopback.h"
#include "common/packet.h"
#include "edgeshed.skel.h"

namespace edgeshed::testing {
namespace {

using namespace std::chrono_literals;

struct LinkDeleter {
  void operator()(bpf_link* l) const { bpf_link__destroy(l); }
};

class TrackerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dp_.count_this_netns_only();
    link_.reset(bpf_program__attach(dp_.skeleton()->progs.edgeshed_track));
    ASSERT_TRUE(link_) << "tp_btf attach failed: errno " << errno;
  }

  void protect(uint16_t port, uint32_t class_id) {
    ASSERT_TRUE(dp_.maps().set_ports({{kNormalPort, EDGESHED_CLASS_NORMAL}, {port, class_id}}));
  }

  // Counts change in softirq context; wait for them rather than race.
  void expect_counts(uint16_t port, uint32_t class_id, uint64_t want) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    uint64_t port_count = 0, class_count = 0;
    do {
      port_count = dp_.maps().read_connection_port(port).value();
      class_count = dp_.maps().read_connection_classes().value()[class_id];
      if (port_count == want && class_count == want) return;
      std::this_thread::sleep_for(10ms);
    } while (std::chrono::steady_clock::now() < deadline);
    EXPECT_EQ(port_count, want) << "port " << port;
    EXPECT_EQ(class_count, want) << "class " << class_id;
  }

  DataplaneFixture dp_;
  std::unique_ptr<bpf_link, LinkDeleter> link_;
};

TEST_F(TrackerTest, CountsQueuedAndAcceptedAndReturnsToZero) {
  uint16_t port;
  Fd listener = listen_on_loopback(AF_INET, &port);
  protect(port, EDGESHED_CLASS_NORMAL);

  std::vector<Fd> clients;
  clients.reserve(6);
  for (int i = 0; i < 6; ++i) clients.push_back(connect_loopback(AF_INET, port));
  expect_counts(port, EDGESHED_CLASS_NORMAL, 6);  // all in the accept queue

  std::vector<Fd> accepted;
  accepted.reserve(3);
  for (int i = 0; i < 3; ++i) accepted.emplace_back(accept(listener.get(), nullptr, nullptr));
  expect_counts(port, EDGESHED_CLASS_NORMAL, 6);  // accepting does not change it

  accepted[0].reset();  // server closes first
  expect_counts(port, EDGESHED_CLASS_NORMAL, 5);
  clients[1].reset();  // client closes an accepted connection: CLOSE_WAIT,
  std::this_thread::sleep_for(100ms);
  expect_counts(port, EDGESHED_CLASS_NORMAL, 5);  // which the server still holds
  accepted[1].reset();                            // until it closes too
  expect_counts(port, EDGESHED_CLASS_NORMAL, 4);
  clients[4].reset();  // client gives up on one never accepted: still queued
  std::this_thread::sleep_for(100ms);
  expect_counts(port, EDGESHED_CLASS_NORMAL, 4);

  listener.reset();  // the queued rest is reset with the listener
  accepted.clear();
  clients.clear();
  expect_counts(port, EDGESHED_CLASS_NORMAL, 0);
}

// A client that sends its request and half-closes (shutdown(SHUT_WR)) is
// still being served: its slot is freed when the server closes, not at the
// client's FIN.
TEST_F(TrackerTest, AHalfClosedClientKeepsItsCountUntilTheServerCloses) {
  uint16_t port;
  Fd listener = listen_on_loopback(AF_INET, &port);
  protect(port, EDGESHED_CLASS_NORMAL);
  Fd client = connect_loopback(AF_INET, port);
  Fd served(accept(listener.get(), nullptr, nullptr));
  ASSERT_TRUE(served.valid());
  expect_counts(port, EDGESHED_CLASS_NORMAL, 1);

  ASSERT_EQ(send(client.get(), "GET / HTTP/1.0\r\n\r\n", 18, 0), 18);
  ASSERT_EQ(shutdown(client.get(), SHUT_WR), 0);
  char buf[64];
  ASSERT_EQ(recv(served.get(), buf, sizeof(buf), 0), 18);  // the request
  ASSERT_EQ(recv(served.get(), buf, sizeof(buf), 0), 0);   // and the FIN: CLOSE_WAIT
  std::this_thread::sleep_for(100ms);
  expect_counts(port, EDGESHED_CLASS_NORMAL, 1);

  ASSERT_EQ(send(served.get(), "HTTP/1.0 200 OK\r\n\r\n", 19, 0), 19);
  served.reset();  // the server is done: LAST_ACK
  expect_counts(port, EDGESHED_CLASS_NORMAL, 0);
}

TEST_F(TrackerTest, UnprotectedPortsAreNotCounted) {
  uint16_t port;
  Fd listener = listen_on_loopback(AF_INET, &port);
  Fd client = connect_loopback(AF_INET, port);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(dp_.maps().read_connection_port(port).value(), 0u);
  auto classes = dp_.maps().read_connection_classes().value();
  EXPECT_EQ(classes[EDGESHED_CLASS_NORMAL], 0u);
}

TEST_F(TrackerTest, SourcePrefixClassAndDualStackListener) {
  uint16_t port;
  Fd listener = listen_on_loopback(AF_INET6, &port);  // v4 clients arrive v4-mapped
  protect(port, EDGESHED_CLASS_NORMAL);
  ASSERT_TRUE(
      dp_.maps().set_prefix(parse_ip_prefix("127.0.0.0/8").value(), EDGESHED_CLASS_CRITICAL));

  std::vector<Fd> clients;
  clients.reserve(4);
  for (int i = 0; i < 4; ++i) clients.push_back(connect_loopback(AF_INET, port));
  expect_counts(port, EDGESHED_CLASS_CRITICAL, 4);
  EXPECT_EQ(dp_.maps().read_connection_classes().value()[EDGESHED_CLASS_NORMAL], 0u);

  // Editing the class now must not make the close uncount the wrong class.
  ASSERT_TRUE(dp_.maps().remove_prefix(parse_ip_prefix("127.0.0.0/8").value()));
  clients.clear();
  listener.reset();
  expect_counts(port, EDGESHED_CLASS_CRITICAL, 0);
  EXPECT_EQ(dp_.maps().read_connection_classes().value()[EDGESHED_CLASS_NORMAL], 0u);
}

TEST_F(TrackerTest, ManyShortConnectionsLeaveNoCount) {
  uint16_t port;
  Fd listener = listen_on_loopback(AF_INET, &port);
  protect(port, EDGESHED_CLASS_NORMAL);
  for (int i = 0; i < 200; ++i) {
    Fd client = connect_loopback(AF_INET, port);
    Fd server(accept(listener.get(), nullptr, nullptr));
    if (i % 2) client.reset();  // alternate who closes first
  }
  expect_counts(port, EDGESHED_CLASS_NORMAL, 0);
}

// A network that establishes connections is real (a spoofer cannot finish a
// handshake from its victim's addresses): each one earns it per_conn RSTs
// of its reflection limit, up to the whole burst, so clients behind one
// address that a sustained overload sheds are refused rather than dropped.
class ReflectCreditTest : public TrackerTest {
 protected:
  // Every SYN to kNormalPort shed by a RST, within the reflection limit:
  // one RST a second once the burst is spent, so the test never refills it.
  void shed_all(uint16_t per_conn) {
    auto cfg = dp_.config();
    cfg.action = EDGESHED_ACTION_RST;
    cfg.rst_per_sec_per_cpu = 10'000'000;
    cfg.rst_reflect = {1, kBurst, 24, 48, per_conn};
    dp_.set_config(cfg);
    dp_.set_class_policy(EDGESHED_CLASS_NORMAL, kShedAll);
  }
  // SYNs from 127.0.0.0/24 until one is dropped: the RSTs it was sent.
  int rsts_until_a_drop() {
    for (int i = 0; i < 100; ++i) {
      auto frame =
          PacketBuilder::syn_v4(static_cast<uint16_t>(30000 + i), kNormalPort, "127.0.0.9").build();
      if (dp_.run(Entry::kXdp, frame).verdict != Verdict::kTx) return i;
    }
    return -1;
  }
  // n connections from 127.0.0.1 to a protected loopback port, established.
  void establish(uint16_t port, size_t n) {
    for (size_t i = 0; i < n; ++i) clients_.push_back(connect_loopback(AF_INET, port));
    expect_counts(port, EDGESHED_CLASS_NORMAL, clients_.size());
  }

  static constexpr uint32_t kBurst = 4;
  std::vector<Fd> clients_;
};

TEST_F(ReflectCreditTest, AnEstablishedConnectionEarnsItsNetworkRsts) {
  constexpr uint16_t kPerConn = 3;
  shed_all(kPerConn);
  uint16_t port;
  Fd listener = listen_on_loopback(AF_INET, &port);
  protect(port, EDGESHED_CLASS_NORMAL);

  EXPECT_EQ(rsts_until_a_drop(), static_cast<int>(kBurst));
  establish(port, 1);
  EXPECT_EQ(rsts_until_a_drop(), kPerConn);
  // Credit beyond the burst is not kept: two more pay the debt off, and the
  // network has its burst again, no more.
  establish(port, 2);
  EXPECT_EQ(rsts_until_a_drop(), static_cast<int>(kBurst));
  // Without a new connection, nothing more.
  EXPECT_EQ(rsts_until_a_drop(), 0);
  EXPECT_EQ(dp_.stats().global[EDGESHED_GCTR_RST_REFLECT_LIMITED], 4u);
}

TEST_F(ReflectCreditTest, NothingIsEarnedWithoutPerConnOrOnAnUnprotectedPort) {
  shed_all(0);
  uint16_t port, other;
  Fd listener = listen_on_loopback(AF_INET, &port);
  Fd unprotected = listen_on_loopback(AF_INET, &other);
  protect(port, EDGESHED_CLASS_NORMAL);
  EXPECT_EQ(rsts_until_a_drop(), static_cast<int>(kBurst));
  establish(port, 2);
  EXPECT_EQ(rsts_until_a_drop(), 0);

  shed_all(3);
  Fd elsewhere = connect_loopback(AF_INET, other);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(rsts_until_a_drop(), 0);
}

}  // namespace
}  // namespace edgeshed::testing
