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
#include "common/fd.h"
#include "common/packet.h"
#include "dataplane/events.h"
#include "edgeshed.skel.h"

namespace edgeshed::testing {
namespace {

using namespace std::chrono_literals;

constexpr char kRequest[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
constexpr size_t kRequestBytes = sizeof(kRequest) - 1;
constexpr uint8_t kAckPsh = kAck | kPsh;
constexpr uint32_t kCap = 4;
#define kTestV4 "192.0.2.1"  // on the test namespace's loopback

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

uint16_t local_port(int fd) {
  sockaddr_storage a{};
  socklen_t len = sizeof(a);
  EXPECT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len), 0);
  return ntohs(a.ss_family == AF_INET ? reinterpret_cast<sockaddr_in*>(&a)->sin_port
                                      : reinterpret_cast<sockaddr_in6*>(&a)->sin6_port);
}

// Whether the socket was reset within `wait`: a read that does not block
// says so.
bool was_reset(int fd, std::chrono::milliseconds wait = 2000ms) {
  char c;
  auto deadline = std::chrono::steady_clock::now() + wait;
  do {
    ssize_t n = recv(fd, &c, 1, MSG_DONTWAIT);
    if (n < 0 && errno == ECONNRESET) return true;
    if (n >= 0 || errno != EAGAIN) return false;
    std::this_thread::sleep_for(2ms);
  } while (std::chrono::steady_clock::now() < deadline);
  return false;
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

// Loopback up in the calling thread's network namespace.
void loopback_up() {
  Fd s(socket(AF_INET, SOCK_DGRAM, 0));
  ASSERT_TRUE(s.valid());
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
  ASSERT_EQ(ioctl(s.get(), SIOCGIFFLAGS, &ifr), 0) << strerror(errno);
  ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP);
  ASSERT_EQ(ioctl(s.get(), SIOCSIFFLAGS, &ifr), 0) << strerror(errno);
}

class RefuseRequestTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    if (!dp_.skeleton().measures_response()) {
      GTEST_SKIP() << "this kernel lacks tp_btf/sk_data_ready (6.6) or tcp_sendmsg_locked (6.11)";
    }
    // A namespace of its own, for this thread only (TearDown returns): the
    // client's RST comes back in on loopback without the route a local
    // sender attaches, and IPv4 routes such a frame from a local address as
    // a martian unless accept_local is on, which the test may set only
    // here; and 127.0.0.1 would be one whatever it sets (route_localnet),
    // so IPv4 uses a documentation address on this loopback.
    host_netns_ = Fd(open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC));
    ASSERT_TRUE(host_netns_.valid());
    ASSERT_EQ(unshare(CLONE_NEWNET), 0) << strerror(errno);
    loopback_up();
    ASSERT_EQ(
        std::system("ip addr add " kTestV4 "/32 dev lo && "
                    "sysctl -qw net.ipv4.conf.all.accept_local=1 net.ipv4.conf.lo.accept_local=1"),
        0);
    links_ = dp_.attach_request_tracking();
    ASSERT_EQ(links_.size(), 3u);
    dp_.count_this_netns_only();
    auto cfg = dp_.config();
    cfg.events_per_sec_per_cpu = 100;
    cfg.event_sample = 1;
    dp_.set_config(cfg);
    auto reader = EventReader::from_fd(
        Fd(fcntl(bpf_map__fd(dp_.skeleton()->maps.es_events), F_DUPFD_CLOEXEC, 0)),
        [this](const edgeshed_event& ev) { events_.push_back(ev); });
    ASSERT_TRUE(reader) << reader.error().message;
    reader_.emplace(std::move(*reader));
    listener_ = listen_on(&port_);
    set_requests(EDGESHED_REQUESTS_REFUSE);
    edgeshed_class_policy pol{};
    pol.inflight_cap = kCap;
    dp_.set_class_policy(EDGESHED_CLASS_NORMAL, pol);
    // A keep-alive connection: a connection's first request is the SYN
    // decision's, never refused.
    open_connection();
    serve_one_request();
  }

  // A new connection of the client, established and known to the tracker.
  void open_connection() {
    client_ = connect_to(port_);
    server_ = Fd(accept(listener_.get(), nullptr, nullptr));
    ASSERT_TRUE(server_.valid());
    std::this_thread::sleep_for(20ms);
  }
  // One request read and answered, the answer read and acknowledged.
  void serve_one_request() {
    ASSERT_EQ(send(client_.get(), kRequest, kRequestBytes, MSG_NOSIGNAL),
              static_cast<ssize_t>(kRequestBytes));
    std::string buf(kRequestBytes, '\0');
    ASSERT_EQ(recv(server_.get(), buf.data(), buf.size(), MSG_WAITALL),
              static_cast<ssize_t>(kRequestBytes));
    constexpr std::string_view kAnswer = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n";
    ASSERT_EQ(send(server_.get(), kAnswer.data(), kAnswer.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(kAnswer.size()));
    std::string answer(kAnswer.size(), '\0');
    ASSERT_EQ(recv(client_.get(), answer.data(), answer.size(), MSG_WAITALL),
              static_cast<ssize_t>(kAnswer.size()));
    std::this_thread::sleep_for(20ms);
  }

  void TearDown() override {
    if (host_netns_.valid()) {
      EXPECT_EQ(setns(host_netns_.get(), CLONE_NEWNET), 0) << strerror(errno);
    }
  }

  int family() const { return GetParam(); }
  // The test's address: kTestV4 for IPv4, ::1 for IPv6.
  sockaddr_storage address(uint16_t port) const {
    sockaddr_storage a{};
    if (family() == AF_INET) {
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
  socklen_t address_len() const {
    return family() == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
  }
  Fd listen_on(uint16_t* port) const {
    Fd fd(socket(family(), SOCK_STREAM | SOCK_CLOEXEC, 0));
    EXPECT_TRUE(fd.valid());
    sockaddr_storage a = address(0);
    EXPECT_EQ(bind(fd.get(), reinterpret_cast<sockaddr*>(&a), address_len()), 0) << strerror(errno);
    EXPECT_EQ(listen(fd.get(), 64), 0);
    *port = local_port(fd.get());
    return fd;
  }
  Fd connect_to(uint16_t port) const {
    Fd fd(socket(family(), SOCK_STREAM | SOCK_CLOEXEC, 0));
    EXPECT_TRUE(fd.valid());
    sockaddr_storage a = address(port);
    EXPECT_EQ(connect(fd.get(), reinterpret_cast<sockaddr*>(&a), address_len()), 0)
        << strerror(errno);
    return fd;
  }
  void set_requests(uint8_t requests) {
    ASSERT_TRUE(
        dp_.maps().set_ports({{port_, EDGESHED_CLASS_NORMAL, EDGESHED_PORT_TCP, requests}}));
  }

  // The frame of the client's next request, as it would reach the server.
  Bytes next_request(int32_t seq_offset = 0) {
    const Sequences s = sequences_of(client_.get());
    TcpSpec tcp;
    tcp.sport = local_port(client_.get());
    tcp.dport = port_;
    tcp.seq = s.client_next + static_cast<uint32_t>(seq_offset);
    tcp.ack = s.server_next;
    tcp.flags = kAckPsh;
    tcp.payload = Bytes(kRequest, kRequest + kRequestBytes);
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
    EXPECT_EQ(evs[0].sport, local_port(client_.get()));
    EXPECT_EQ(evs[0].dport, port_);
  }

  uint64_t counted(int counter) const { return dp_.stats().cls[EDGESHED_CLASS_NORMAL][counter]; }

  // The frame passed as it came, and nobody was reset.
  void expect_untouched(const Bytes& frame, const RunResult& r) {
    EXPECT_EQ(r.verdict, Verdict::kPass);
    EXPECT_EQ(r.out, frame);
    EXPECT_EQ(counted(EDGESHED_CTR_REQUEST_REFUSED), 0u);
    EXPECT_FALSE(was_reset(client_.get(), 200ms));
    if (counted(EDGESHED_CTR_WOULD_REFUSE_REQUEST) == 0) {
      EXPECT_TRUE(events().empty());
    }
  }

  DataplaneFixture dp_;
  std::optional<EventReader> reader_;
  std::vector<edgeshed_event> events_;
  std::vector<BpfLink> links_;
  Fd host_netns_, listener_, client_, server_;
  uint16_t port_ = 0;
};

TEST_P(RefuseRequestTest, ANewRequestAtTheCapResetsBothEnds) {
  dp_.set_inflight(EDGESHED_CLASS_NORMAL, kCap);
  const Bytes frame = next_request();
  const RunResult r = run(frame);
  EXPECT_EQ(r.verdict, Verdict::kPass);
  EXPECT_EQ(counted(EDGESHED_CTR_REQUEST_REFUSED), 1u);
  expect_one_event(EDGESHED_EVENT_REQUEST_REFUSED);
  EXPECT_TRUE(was_reset(client_.get())) << "the client's RST went back out of loopback";

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
  EXPECT_TRUE(was_reset(server_.get())) << "the server accepted the RST";
}

TEST_P(RefuseRequestTest, UnderTheCapTheRequestPasses) {
  dp_.set_inflight(EDGESHED_CLASS_NORMAL, kCap - 1);
  const Bytes frame = next_request();
  expect_untouched(frame, run(frame));
}

TEST_P(RefuseRequestTest, AConnectionsFirstRequestPasses) {
  // Admitted by the SYN decision: refused now, it would fail at the client,
  // which retries only on a reused connection.
  open_connection();
  dp_.set_inflight(EDGESHED_CLASS_NORMAL, kCap);
  const Bytes frame = next_request();
  expect_untouched(frame, run(frame));
}

TEST_P(RefuseRequestTest, ARequestInServiceIsNeverCut) {
  // The connection's own request arrived: the next segment is more of it,
  // or a second request beside it (pipelined, HTTP/2).
  ASSERT_EQ(send(client_.get(), kRequest, kRequestBytes, MSG_NOSIGNAL),
            static_cast<ssize_t>(kRequestBytes));
  std::this_thread::sleep_for(20ms);
  dp_.set_inflight(EDGESHED_CLASS_NORMAL, kCap);
  const Bytes frame = next_request();
  expect_untouched(frame, run(frame));
}

TEST_P(RefuseRequestTest, AResponseOnItsWayIsNeverCut) {
  // The server read a request and answers more than the client takes in:
  // its answer is partly unsent, partly unacknowledged, and no request is
  // in service (the first byte went out). A pipelined request arriving now
  // must not reset the connection under that answer.
  ASSERT_EQ(send(client_.get(), kRequest, kRequestBytes, MSG_NOSIGNAL),
            static_cast<ssize_t>(kRequestBytes));
  std::string buf(kRequestBytes, '\0');
  ASSERT_EQ(recv(server_.get(), buf.data(), buf.size(), MSG_WAITALL),
            static_cast<ssize_t>(kRequestBytes));
  const std::string answer(4 << 20, 'x');
  ASSERT_GT(send(server_.get(), answer.data(), answer.size(), MSG_NOSIGNAL | MSG_DONTWAIT), 0);
  std::this_thread::sleep_for(20ms);
  dp_.set_inflight(EDGESHED_CLASS_NORMAL, kCap);
  const Bytes frame = next_request();
  expect_untouched(frame, run(frame));
}

TEST_P(RefuseRequestTest, ARetransmissionPasses) {
  dp_.set_inflight(EDGESHED_CLASS_NORMAL, kCap);
  const Bytes frame = next_request(-static_cast<int32_t>(kRequestBytes));
  expect_untouched(frame, run(frame));
}

TEST_P(RefuseRequestTest, APortThatPassesRequestsCapsOnlySyns) {
  set_requests(EDGESHED_REQUESTS_PASS);
  dp_.set_inflight(EDGESHED_CLASS_NORMAL, kCap);
  const Bytes frame = next_request();
  expect_untouched(frame, run(frame));
}

TEST_P(RefuseRequestTest, ObserveModeCountsWhatItWouldRefuse) {
  auto cfg = dp_.config();
  cfg.mode = EDGESHED_MODE_OBSERVE;
  dp_.set_config(cfg);
  dp_.set_inflight(EDGESHED_CLASS_NORMAL, kCap);
  const Bytes frame = next_request();
  expect_untouched(frame, run(frame));
  EXPECT_EQ(counted(EDGESHED_CTR_WOULD_REFUSE_REQUEST), 1u);
  expect_one_event(EDGESHED_EVENT_WOULD_REFUSE_REQUEST);
}

TEST_P(RefuseRequestTest, ASilentControllerFailsOpen) {
  auto cfg = dp_.config();
  cfg.heartbeat_timeout_ns = 1'000'000;  // 1 ms, long gone by the run
  dp_.set_config(cfg);
  dp_.set_heartbeat(1);
  dp_.set_inflight(EDGESHED_CLASS_NORMAL, kCap);
  const Bytes frame = next_request();
  expect_untouched(frame, run(frame));
}

TEST_P(RefuseRequestTest, AnUnprotectedPortIsUntouched) {
  ASSERT_TRUE(dp_.maps().set_ports({{static_cast<uint16_t>(port_ + 1), EDGESHED_CLASS_NORMAL,
                                     EDGESHED_PORT_TCP, EDGESHED_REQUESTS_REFUSE}}));
  dp_.set_inflight(EDGESHED_CLASS_NORMAL, kCap);
  const Bytes frame = next_request();
  expect_untouched(frame, run(frame));
}

INSTANTIATE_TEST_SUITE_P(Families, RefuseRequestTest, ::testing::Values(AF_INET, AF_INET6),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::string(info.param == AF_INET ? "ipv4" : "ipv6");
                         });

}  // namespace
}  // namespace edgeshed::testing
