// Requests in service, counted in the kernel against real loopback
// connections: what the caps limit. Idle connections count nothing; a
// connection counts one from its request's arrival (read or not) to the
// server's answer or its end, whatever the shape: keep-alive, pipelined,
// several requests outstanding, half-closed, reset.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bpf/dataplane_fixture.h"
#include "bpf/tracked_loopback.h"
#include "common/fd.h"
#include "common/loopback.h"
#include "dataplane/inflight_seed.h"
#include "edgeshed.skel.h"

namespace edgeshed::testing {
namespace {

using namespace std::chrono_literals;

constexpr size_t kRequestBytes = kHttpRequestBytes;
constexpr size_t kResponseBytes = kHttpResponseBytes;

// Each test runs with the port timed at the tracepoints, and at its
// service's cgroup (the cgroup_skb programs), both kinds linked: the
// counts are the same.
class RequestCountTest : public TrackedLoopbackTest, public ::testing::WithParamInterface<uint8_t> {
 protected:
  void SetUp() override {
    TrackedLoopbackTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    time_by(GetParam());
  }

  // Counts change in softirq context: wait for them rather than race. The
  // port's and the class's count agree, and so do the connections.
  void expect_in_service(uint64_t want, uint64_t connections) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    uint64_t port_count = 0, class_count = 0, conns = 0;
    do {
      port_count = dp_.maps().read_inflight_port(port_).value();
      class_count = dp_.maps().read_inflight_classes().value()[EDGESHED_CLASS_NORMAL];
      conns = dp_.maps().read_connection_port(port_).value();
      if (port_count == want && class_count == want && conns == connections) return;
      std::this_thread::sleep_for(5ms);
    } while (std::chrono::steady_clock::now() < deadline);
    EXPECT_EQ(port_count, want) << "requests in service, port";
    EXPECT_EQ(class_count, want) << "requests in service, class";
    EXPECT_EQ(conns, connections) << "connections";
  }

  // The client's request is in service before the server accepts the
  // connection, and until it answers.
  void request_before_accept(Fd client) {
    send_request(client.get());
    expect_in_service(1, 1);
    Fd server(accept(listener_.get(), nullptr, nullptr));
    read_bytes(server.get(), kRequestBytes);
    send_response(server.get());
    expect_in_service(0, 1);
  }

  static void answer(const Pair& p) {
    read_bytes(p.server.get(), kRequestBytes);
    send_response(p.server.get());
  }
};

TEST_P(RequestCountTest, IdleConnectionsCountNothing) {
  constexpr int kEach = 50;
  std::vector<Pair> idle;
  idle.reserve(kEach);
  for (int i = 0; i < kEach; ++i) idle.push_back(open_pair());
  std::vector<Fd> queued;  // never accepted: idle in the accept queue
  queued.reserve(kEach);
  for (int i = 0; i < kEach; ++i) queued.push_back(connect_loopback(AF_INET, port_));
  expect_in_service(0, 100);
}

TEST_P(RequestCountTest, KeepAliveCountsEachRequestUntilItsAnswer) {
  Pair p = open_pair();
  for (int i = 0; i < 3; ++i) {
    send_request(p.client.get());
    expect_in_service(1, 1);  // arrived, unread
    read_bytes(p.server.get(), kRequestBytes);
    expect_in_service(1, 1);  // read: the server is working on it
    send_response(p.server.get());
    expect_in_service(0, 1);  // answered: idle again
    read_bytes(p.client.get(), kResponseBytes);
  }
  // A response in several sends ends the request at the first.
  send_request(p.client.get());
  read_bytes(p.server.get(), kRequestBytes);
  send_response(p.server.get());
  send_response(p.server.get());
  expect_in_service(0, 1);
}

TEST_P(RequestCountTest, ARequestQueuedBeforeAcceptIsInService) {
  request_before_accept(connect_loopback(AF_INET, port_));
}

// Both kinds of timer are linked, and only the port's own times it: one
// response sample a request, and plain keep-alive is no overlap (a second
// timer would see every request arrive twice).
TEST_P(RequestCountTest, EachRequestIsTimedOnceByThePortsTimers) {
  constexpr uint64_t kRequests = 4;
  Pair p = open_pair();
  for (uint64_t i = 0; i < kRequests; ++i) {
    send_request(p.client.get());
    expect_in_service(1, 1);
    answer(p);
    expect_in_service(0, 1);
    read_bytes(p.client.get(), kResponseBytes);
  }
  edgeshed_sk_state st{};
  int fd = p.server.get();
  ASSERT_EQ(bpf_map_lookup_elem(bpf_map__fd(dp_.skeleton()->maps.es_sk_state), &fd, &st), 0);
  EXPECT_EQ(st.overlapped, 0u);
  EXPECT_EQ(st.untimed, 0u);
  uint64_t samples = 0;
  const auto latency = dp_.maps().read_latency();
  ASSERT_TRUE(latency) << latency.error().message;
  for (const auto& port : *latency) {
    if (port.port == port_)
      samples = port.measures[static_cast<size_t>(LatencyMeasure::kResponse)].count;
  }
  EXPECT_EQ(samples, kRequests);
}

// A server with TCP_DEFER_ACCEPT (nginx's `listen ... deferred`) makes the
// connection only when the client's first data comes: the segment that
// completes the handshake carries the request, and the listener, not the
// connection, sees it arrive.
TEST_P(RequestCountTest, ARequestThatCompletesTheHandshakeIsInService) {
  const int defer_s = 5;
  ASSERT_EQ(setsockopt(listener_.get(), IPPROTO_TCP, TCP_DEFER_ACCEPT, &defer_s, sizeof(defer_s)),
            0);
  Fd client = connect_loopback(AF_INET, port_);
  std::this_thread::sleep_for(20ms);  // the bare ACK is dropped: no connection yet
  expect_in_service(0, 0);
  request_before_accept(std::move(client));
}

// A request that arrives while an earlier response is still being sent
// stays in service until its own answer: the rest of the earlier response,
// written before it came, answers nothing.
TEST_P(RequestCountTest, TheRestOfAnEarlierResponseAnswersNoLaterRequest) {
  Pair p = open_pair();
  send_request(p.client.get());
  read_bytes(p.server.get(), kRequestBytes);
  // A response larger than the buffers: most of it waits to be sent.
  ASSERT_EQ(fcntl(p.server.get(), F_SETFL, fcntl(p.server.get(), F_GETFL) | O_NONBLOCK), 0);
  const std::string chunk(size_t{64} * 1024, 'x');
  size_t sent = 0;
  for (ssize_t n; (n = send(p.server.get(), chunk.data(), chunk.size(), MSG_NOSIGNAL)) > 0;) {
    sent += static_cast<size_t>(n);
  }
  ASSERT_GT(sent, chunk.size());
  expect_in_service(0, 1);  // answered at its first byte
  send_request(p.client.get());
  expect_in_service(1, 1);
  ASSERT_EQ(fcntl(p.server.get(), F_SETFL, fcntl(p.server.get(), F_GETFL) & ~O_NONBLOCK), 0);
  read_bytes(p.server.get(), kRequestBytes);  // read: the server works on it
  read_bytes(p.client.get(), sent);           // the rest of the first response goes out
  std::this_thread::sleep_for(20ms);
  expect_in_service(1, 1);
  send_response(p.server.get());
  expect_in_service(0, 1);
}

// Two requests sent back to back: the server answers the first with the
// second still unread, which stays in service until its own answer.
TEST_P(RequestCountTest, APipelinedRequestStaysInServiceUntilItsAnswer) {
  Pair p = open_pair();
  send_request(p.client.get());
  send_request(p.client.get());
  expect_in_service(1, 1);  // one connection with work outstanding
  read_bytes(p.server.get(), kRequestBytes);
  send_response(p.server.get());
  expect_in_service(1, 1);  // the second, unread
  read_bytes(p.server.get(), kRequestBytes);
  send_response(p.server.get());
  expect_in_service(0, 1);
}

// HTTP/2-like: a request arrives while another is outstanding on the same
// connection. The connection counts once, until the server next sends.
TEST_P(RequestCountTest, SeveralOutstandingRequestsCountTheConnectionOnce) {
  Pair p = open_pair();
  send_request(p.client.get());
  read_bytes(p.server.get(), kRequestBytes);
  send_request(p.client.get());
  read_bytes(p.server.get(), kRequestBytes);
  send_request(p.client.get());
  expect_in_service(1, 1);
  send_response(p.server.get());  // one answer; one request still unread
  expect_in_service(1, 1);
  read_bytes(p.server.get(), kRequestBytes);
  send_response(p.server.get());
  expect_in_service(0, 1);
}

TEST_P(RequestCountTest, AHalfClosedClientIsInServiceUntilTheAnswer) {
  Pair p = open_pair();
  send_request(p.client.get());
  ASSERT_EQ(shutdown(p.client.get(), SHUT_WR), 0);
  read_bytes(p.server.get(), kRequestBytes);
  char c;
  ASSERT_EQ(recv(p.server.get(), &c, 1, 0), 0);  // the FIN: CLOSE_WAIT
  expect_in_service(1, 1);
  send_response(p.server.get());
  expect_in_service(0, 1);
  p.server.reset();
  expect_in_service(0, 0);
}

// However a connection ends with its request unanswered, the request leaves
// service with it; nothing that arrives after the server's close counts.
TEST_P(RequestCountTest, UnansweredRequestsLeaveServiceWithTheirConnection) {
  Pair closed_by_server = open_pair();
  Pair reset_by_client = open_pair();
  Pair reset_by_server = open_pair();
  Pair after_close = open_pair();
  for (Pair* p : {&closed_by_server, &reset_by_client, &reset_by_server, &after_close}) {
    send_request(p->client.get());
  }
  expect_in_service(4, 4);

  closed_by_server.server.reset();
  expect_in_service(3, 3);
  reset_on_close(reset_by_client.client.get());
  reset_by_client.client.reset();
  expect_in_service(2, 2);
  reset_on_close(reset_by_server.server.get());
  reset_by_server.server.reset();
  expect_in_service(1, 1);

  // The server answers and half-closes (FIN_WAIT): it is done with the
  // connection, so a late request from the client is not in service.
  read_bytes(after_close.server.get(), kRequestBytes);
  send_response(after_close.server.get());
  ASSERT_EQ(shutdown(after_close.server.get(), SHUT_WR), 0);
  expect_in_service(0, 0);
  send_request(after_close.client.get());
  std::this_thread::sleep_for(50ms);
  expect_in_service(0, 0);
}

TEST_P(RequestCountTest, ThePeakIsTheMostAtOnceSinceItWasTaken) {
  ASSERT_TRUE(dp_.maps().take_inflight_peaks());
  std::vector<Pair> pairs;
  for (int i = 0; i < 5; ++i) {
    pairs.push_back(open_pair());
    send_request(pairs.back().client.get());
  }
  expect_in_service(5, 5);
  for (Pair& p : pairs) {
    read_bytes(p.server.get(), kRequestBytes);
    send_response(p.server.get());
  }
  expect_in_service(0, 5);
  auto peaks = dp_.maps().take_inflight_peaks();
  ASSERT_TRUE(peaks) << peaks.error().message;
  EXPECT_EQ((*peaks)[EDGESHED_CLASS_NORMAL], 5u);
  EXPECT_EQ(dp_.maps().take_inflight_peaks().value()[EDGESHED_CLASS_NORMAL], 0u);
}

// The daemon may start with clients already connected: the seed walk puts in
// service a request still unread, one read but not answered (the server has
// sent nothing since it came), and a second request read on a keep-alive
// connection; it counts idle connections as idle, also one whose last
// request was answered. The kernel keeps those times in jiffies: the steps
// are 20 ms apart.
TEST_P(RequestCountTest, TheSeedWalkCountsRequestsOfEarlierConnections) {
  links_.clear();  // the tracker is not there when these connections open
  Pair idle = open_pair();
  Pair answered = open_pair();
  Pair waiting = open_pair();
  Pair working = open_pair();
  Pair second = open_pair();
  for (Pair* p : {&answered, &waiting, &working, &second}) send_request(p->client.get());
  std::this_thread::sleep_for(20ms);
  for (Pair* p : {&answered, &working, &second}) read_bytes(p->server.get(), kRequestBytes);
  std::this_thread::sleep_for(20ms);
  send_response(answered.server.get());
  send_response(second.server.get());
  std::this_thread::sleep_for(20ms);
  send_request(second.client.get());
  read_bytes(second.server.get(), kRequestBytes);
  std::this_thread::sleep_for(20ms);
  links_ = dp_.attach_request_tracking();
  ASSERT_EQ(links_.size(), 3u);
  link_cgroup_timers();
  auto seed = InflightSeed::from_skeleton(dp_.skeleton());
  ASSERT_TRUE(seed) << seed.error().message;
  ASSERT_TRUE(seed->run());
  expect_in_service(3, 5);
  ASSERT_TRUE(seed->run());  // a second walk counts nothing twice
  expect_in_service(3, 5);
  read_bytes(waiting.server.get(), kRequestBytes);
  for (Pair* p : {&waiting, &working, &second}) send_response(p->server.get());
  expect_in_service(0, 5);
}

// Exact over many connections of every shape at once: the counts return to
// zero and never go below it (a lost decrement would leave them high, a
// double one would wrap them).
TEST_P(RequestCountTest, ExactAfterManyConnections) {
  constexpr int kBatches = 500;
  constexpr int kBatch = 200;  // 10^5 connections
  for (int b = 0; b < kBatches; ++b) {
    std::vector<Pair> pairs;
    pairs.reserve(kBatch);
    for (int i = 0; i < kBatch; ++i) {
      pairs.push_back(open_pair());
      if (i % 5 != 0) send_request(pairs.back().client.get());  // every fifth idle
    }
    for (int i = 0; i < kBatch; ++i) {
      Pair& p = pairs[static_cast<size_t>(i)];
      switch (i % 4) {
        case 0:  // answered, then the server closes
          if (i % 5) answer(p);
          break;
        case 1:  // unanswered: the client resets
          reset_on_close(p.client.get());
          p.client.reset();
          break;
        case 2:  // answered, then the client closes first
          if (i % 5) answer(p);
          p.client.reset();
          break;
        default:  // unanswered: the server resets
          reset_on_close(p.server.get());
          break;
      }
    }
    pairs.clear();
    if (b % 100 == 99) expect_in_service(0, 0);
  }
  expect_in_service(0, 0);
}

INSTANTIATE_TEST_SUITE_P(Timers, RequestCountTest,
                         ::testing::Values(EDGESHED_TIMERS_TRACEPOINTS, EDGESHED_TIMERS_CGROUP),
                         [](const auto& info) {
                           return info.param == EDGESHED_TIMERS_CGROUP ? "Cgroup" : "Tracepoints";
                         });

}  // namespace
}  // namespace edgeshed::testing
