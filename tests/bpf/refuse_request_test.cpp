// New requests on open connections over the class's cap (refuse_request.bpf.h),
// against real loopback connections in a network namespace of the test's
// own: the TC program's run on a frame of the client's next request resets
// the client at once (the copy it sends back out of loopback) and turns the
// frame into the RST the server's socket accepts. A request in service, an
// answer on its way, a retransmission, a port that passes requests, observe
// mode and a silent controller all pass the frame as it came.
#include <arpa/inet.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "bpf/dataplane_fixture.h"
#include "bpf/loopback_connections.h"
#include "common/fd.h"
#include "common/packet.h"
#include "dataplane/events.h"
#include "dataplane/netns_id.h"
#include "edgeshed.skel.h"

namespace edgeshed::testing {
namespace {

using namespace std::chrono_literals;

constexpr uint8_t kAckPsh = kAck | kPsh;
constexpr uint32_t kCap = 4;

// The client's next sequence number and the server's, from the client's
// socket in repair mode (left without the window probe a plain exit sends).
struct Sequences {
  uint32_t client_next = 0;  // the server's rcv_nxt
  uint32_t server_next = 0;  // the client's rcv_nxt
};
Sequences sequences_of(int client) {
  Sequences s;
  int on = TCP_REPAIR_ON;
  EXPECT_EQ(setsockopt(client, IPPROTO_TCP, TCP_REPAIR, &on, sizeof(on)), 0) << strerror(errno);
  for (int queue : {TCP_SEND_QUEUE, TCP_RECV_QUEUE}) {
    EXPECT_EQ(setsockopt(client, IPPROTO_TCP, TCP_REPAIR_QUEUE, &queue, sizeof(queue)), 0);
    uint32_t seq = 0;
    socklen_t len = sizeof(seq);
    EXPECT_EQ(getsockopt(client, IPPROTO_TCP, TCP_QUEUE_SEQ, &seq, &len), 0) << strerror(errno);
    (queue == TCP_SEND_QUEUE ? s.client_next : s.server_next) = seq;
  }
  int off = TCP_REPAIR_OFF_NO_WP;
  EXPECT_EQ(setsockopt(client, IPPROTO_TCP, TCP_REPAIR, &off, sizeof(off)), 0);
  return s;
}

// Sends a frame out of loopback as it is, as a NIC would deliver it.
void inject_on_loopback(const Bytes& frame) {
  Fd raw(socket(AF_PACKET, SOCK_RAW, 0));
  ASSERT_TRUE(raw.valid()) << strerror(errno);
  sockaddr_ll to{};
  to.sll_family = AF_PACKET;
  to.sll_ifindex = static_cast<int>(if_nametoindex("lo"));
  to.sll_halen = 6;
  ASSERT_EQ(sendto(raw.get(), frame.data(), frame.size(), 0, reinterpret_cast<sockaddr*>(&to),
                   sizeof(to)),
            static_cast<ssize_t>(frame.size()))
      << strerror(errno);
}

class RefuseRequestTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    link_request_tracking(dp_, links_);
    if (IsSkipped() || HasFatalFailure()) return;
    // A namespace of its own, for this thread only: the client's RST comes
    // back in on loopback without the route a local sender attaches.
    loopback_.emplace();
    ASSERT_TRUE(loopback_->entered());
    dp_.count_this_netns_only();
    read_every_event(dp_, reader_, events_);
    if (HasFatalFailure()) return;
    listener_ = sockets().listen_on(&port_);
    set_requests(EDGESHED_REQUESTS_REFUSE);
    edgeshed_class_policy pol{};
    pol.inflight_cap = kCap;
    dp_.set_class_policy(EDGESHED_CLASS_NORMAL, pol);
    // A keep-alive connection: a connection's first request is the SYN
    // decision's, never refused.
    open_connection();
    serve_one_request(conn_);
  }

  // A new connection of the client, established and known to the tracker.
  void open_connection() { conn_ = sockets().open(listener_.get(), port_); }

  int family() const { return GetParam(); }
  LoopbackSockets sockets() const { return LoopbackSockets(family()); }
  void set_requests(uint8_t requests) {
    ASSERT_TRUE(
        dp_.maps().set_ports({{port_, EDGESHED_CLASS_NORMAL, EDGESHED_PORT_TCP, requests}}));
  }

  // The frame of the client's next request, as it would reach the server.
  Bytes next_request(int32_t seq_offset = 0) {
    const Sequences s = sequences_of(conn_.client.get());
    TcpSpec tcp;
    tcp.sport = local_port(conn_.client.get());
    tcp.dport = port_;
    tcp.seq = s.client_next + static_cast<uint32_t>(seq_offset);
    tcp.ack = s.server_next;
    tcp.flags = kAckPsh;
    tcp.payload = Bytes(kRequest.begin(), kRequest.end());
    // Both MACs loopback's: the RST sent back has them swapped, and
    // loopback takes in only frames to its own address.
    PacketBuilder b;
    b.eth(kDefaultDstMac, kDefaultDstMac);
    if (family() == AF_INET) {
      b.ipv4(kTestV4, kTestV4);
    } else {
      b.ipv6("::1", "::1");
    }
    return b.tcp(tcp).build();
  }

  RunResult run(const Bytes& frame) {
    auto r = dp_.try_run_program(dp_.skeleton()->progs.edgeshed_refuse, Entry::kTc, frame);
    EXPECT_TRUE(r.has_value()) << "test run failed: errno " << errno;
    return r.value_or(RunResult{Verdict::kOther, 0, {}});
  }

  // The events the data plane wrote since the last call.
  std::vector<edgeshed_event> events() {
    events_.clear();
    EXPECT_TRUE(reader_->poll(std::chrono::milliseconds(0)));
    return events_;
  }
  // One event of this outcome, of the client's connection.
  void expect_one_event(uint8_t outcome) {
    const auto evs = events();
    ASSERT_EQ(evs.size(), 1u);
    EXPECT_EQ(evs[0].outcome, outcome);
    EXPECT_EQ(evs[0].reason, EDGESHED_REASON_CAP);
    EXPECT_EQ(evs[0].class_id, EDGESHED_CLASS_NORMAL);
    EXPECT_EQ(evs[0].protocol, EDGESHED_PROTO_TCP);
    EXPECT_EQ(evs[0].family, family());
    EXPECT_EQ(evs[0].sport, local_port(conn_.client.get()));
    EXPECT_EQ(evs[0].dport, port_);
  }

  uint64_t counted(int counter) const { return dp_.stats().cls[EDGESHED_CLASS_NORMAL][counter]; }

  // With inflight requests of the class in service, the frame of the
  // client's next request passes as it came.
  void expect_next_request_untouched(uint64_t inflight = kCap, int32_t seq_offset = 0) {
    dp_.set_inflight(EDGESHED_CLASS_NORMAL, inflight);
    const Bytes frame = next_request(seq_offset);
    expect_untouched(frame, run(frame));
  }

  // The frame passed as it came, and nobody was reset.
  void expect_untouched(const Bytes& frame, const RunResult& r) {
    EXPECT_EQ(r.verdict, Verdict::kPass);
    EXPECT_EQ(r.out, frame);
    EXPECT_EQ(counted(EDGESHED_CTR_REQUEST_REFUSED), 0u);
    EXPECT_FALSE(was_reset(conn_.client.get(), 200ms));
    if (counted(EDGESHED_CTR_WOULD_REFUSE_REQUEST) == 0) {
      EXPECT_TRUE(events().empty());
    }
  }

  DataplaneFixture dp_;
  std::optional<EventReader> reader_;
  std::vector<edgeshed_event> events_;
  std::vector<BpfLink> links_;
  std::optional<PrivateLoopback> loopback_;
  Fd listener_;
  Connection conn_;
  uint16_t port_ = 0;
};

TEST_P(RefuseRequestTest, ANewRequestAtTheCapResetsBothEnds) {
  dp_.set_inflight(EDGESHED_CLASS_NORMAL, kCap);
  const Bytes frame = next_request();
  const RunResult r = run(frame);
  EXPECT_EQ(r.verdict, Verdict::kPass);
  EXPECT_EQ(counted(EDGESHED_CTR_REQUEST_REFUSED), 1u);
  expect_one_event(EDGESHED_EVENT_REQUEST_REFUSED);
  EXPECT_TRUE(was_reset(conn_.client.get())) << "the client's RST went back out of loopback";

  // What goes on up is a bare RST from the client, at the server's next
  // sequence number, with whole checksums.
  const auto in = parse_frame(frame);
  const auto out = parse_frame(r.out);
  ASSERT_TRUE(in && out);
  EXPECT_EQ(out->tcp_flags, kRst);
  EXPECT_EQ(out->seq, in->seq);
  EXPECT_EQ(out->sport, in->sport);
  EXPECT_EQ(out->dport, in->dport);
  EXPECT_EQ(out->src_ip, in->src_ip);
  EXPECT_TRUE(out->payload.empty());
  EXPECT_TRUE(out->tcp_checksum_ok);
  // The server's socket takes it: its next read fails, it never saw the
  // request.
  inject_on_loopback(r.out);
  EXPECT_TRUE(was_reset(conn_.server.get())) << "the server accepted the RST";
}

// A container's service behind this namespace's interface: its connection
// is found in its own namespace, by the id this one gives it, and the RST
// that goes on up resets its server there. Without an id nothing is cut.
TEST_P(RefuseRequestTest, AContainersConnectionIsFoundByItsNamespacesId) {
  Fd home(open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(home.valid());
  PrivateLoopback pod;
  ASSERT_TRUE(pod.entered());
  Fd pod_ns(open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC));
  uint16_t port = 0;
  Fd listener = sockets().listen_on(&port);
  ASSERT_EQ(setns(home.get(), CLONE_NEWNET), 0);
  const std::string pod_file = "/proc/self/fd/" + std::to_string(pod_ns.get());
  struct stat st {};
  ASSERT_EQ(fstat(pod_ns.get(), &st), 0);
  const auto pod_inode = static_cast<uint32_t>(st.st_ino);
  const auto id = netns_id_of(pod_file, pod_inode);
  ASSERT_TRUE(id) << id.error().message;
  EXPECT_GE(*id, 0);
  const auto again = netns_id_of(pod_file, pod_inode);
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(*again, *id) << "asked again, the same id";
  EXPECT_FALSE(netns_id_of(pod_file, pod_inode + 1)) << "another namespace by now";
  const auto protect = [&](int32_t netns_id) {
    ASSERT_TRUE(dp_.maps().set_ports({{port, EDGESHED_CLASS_NORMAL, EDGESHED_PORT_TCP,
                                       EDGESHED_REQUESTS_REFUSE, pod_inode, netns_id}}));
  };
  protect(*id);
  ASSERT_EQ(setns(pod_ns.get(), CLONE_NEWNET), 0);
  conn_ = sockets().open(listener.get(), port);
  serve_one_request(conn_);
  port_ = port;
  dp_.set_inflight(EDGESHED_CLASS_NORMAL, kCap);
  const Bytes frame = next_request();
  ASSERT_EQ(setns(home.get(), CLONE_NEWNET), 0);

  protect(-1);
  expect_untouched(frame, run(frame));
  protect(*id);
  const RunResult r = run(frame);
  EXPECT_EQ(counted(EDGESHED_CTR_REQUEST_REFUSED), 1u);
  const auto out = parse_frame(r.out);
  ASSERT_TRUE(out);
  EXPECT_EQ(out->tcp_flags, kRst);
  ASSERT_EQ(setns(pod_ns.get(), CLONE_NEWNET), 0);
  inject_on_loopback(r.out);
  EXPECT_TRUE(was_reset(conn_.server.get())) << "the pod's server accepted the RST";
  // The pod's namespace goes with the fixture's (PrivateLoopback's end).
}

TEST_P(RefuseRequestTest, UnderTheCapTheRequestPasses) { expect_next_request_untouched(kCap - 1); }

TEST_P(RefuseRequestTest, AConnectionsFirstRequestPasses) {
  // Admitted by the SYN decision: refused now, it would fail at the client,
  // which retries only on a reused connection.
  open_connection();
  expect_next_request_untouched();
}

TEST_P(RefuseRequestTest, ARequestInServiceIsNeverCut) {
  // The connection's own request arrived: the next segment is more of it,
  // or a second request beside it (pipelined, HTTP/2).
  send_request(conn_);
  expect_next_request_untouched();
}

TEST_P(RefuseRequestTest, AResponseOnItsWayIsNeverCut) {
  // The server read a request and answers more than the client takes in:
  // its answer is partly unsent, partly unacknowledged, and no request is
  // in service (the first byte went out). A pipelined request arriving now
  // must not reset the connection under that answer.
  send_request(conn_);
  read_request(conn_);
  const std::string answer(4 << 20, 'x');
  ASSERT_GT(send(conn_.server.get(), answer.data(), answer.size(), MSG_NOSIGNAL | MSG_DONTWAIT), 0);
  std::this_thread::sleep_for(20ms);
  expect_next_request_untouched();
}

TEST_P(RefuseRequestTest, AConnectionThatCarriedTwoRequestsAtOncePasses) {
  // The second arrived while the first was in service, and both were read:
  // the second may still be in service, unseen by the request count.
  carry_two_requests_at_once(conn_);
  expect_next_request_untouched();
}

TEST_P(RefuseRequestTest, ARetransmissionPasses) {
  expect_next_request_untouched(kCap, -static_cast<int32_t>(kRequest.size()));
}

TEST_P(RefuseRequestTest, APortThatPassesRequestsCapsOnlySyns) {
  set_requests(EDGESHED_REQUESTS_PASS);
  expect_next_request_untouched();
}

TEST_P(RefuseRequestTest, ObserveModeCountsWhatItWouldRefuse) {
  auto cfg = dp_.config();
  cfg.mode = EDGESHED_MODE_OBSERVE;
  dp_.set_config(cfg);
  expect_next_request_untouched();
  EXPECT_EQ(counted(EDGESHED_CTR_WOULD_REFUSE_REQUEST), 1u);
  expect_one_event(EDGESHED_EVENT_WOULD_REFUSE_REQUEST);
}

TEST_P(RefuseRequestTest, ASilentControllerFailsOpen) {
  auto cfg = dp_.config();
  cfg.heartbeat_timeout_ns = 1'000'000;  // 1 ms, long gone by the run
  dp_.set_config(cfg);
  dp_.set_heartbeat(1);
  expect_next_request_untouched();
}

TEST_P(RefuseRequestTest, AnUnprotectedPortIsUntouched) {
  ASSERT_TRUE(dp_.maps().set_ports({{static_cast<uint16_t>(port_ + 1), EDGESHED_CLASS_NORMAL,
                                     EDGESHED_PORT_TCP, EDGESHED_REQUESTS_REFUSE}}));
  expect_next_request_untouched();
}

INSTANTIATE_TEST_SUITE_P(Families, RefuseRequestTest, ::testing::Values(AF_INET, AF_INET6),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::string(info.param == AF_INET ? "ipv4" : "ipv6");
                         });

}  // namespace
}  // namespace edgeshed::testing
