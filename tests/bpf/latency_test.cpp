// Response and connection time measured in the kernel, against real loopback
// connections served with known service times: per-request connections,
// keep-alive, a lazy accept(), sendfile(), either side closing first.
#include <bpf/libbpf.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bpf/dataplane_fixture.h"
#include "common/fd.h"
#include "common/latency_window.h"
#include "common/loopback.h"
#include "edgeshed.skel.h"

namespace edgeshed::testing {
namespace {

using namespace std::chrono_literals;

constexpr size_t kRequestBytes = 64;
constexpr size_t kResponseBytes = 512;
// Sleeps end late on a loaded 2-core machine, never early: the upper bound
// allows some scheduling slack on top of the 10%.
constexpr double kTolerance = 0.10;
constexpr double kSlackS = 0.004;

bool write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool read_exactly(int fd, size_t n) {
  char buf[kResponseBytes];
  while (n > 0) {
    ssize_t r = recv(fd, buf, std::min(n, sizeof(buf)), 0);
    if (r <= 0) return false;
    n -= static_cast<size_t>(r);
  }
  return true;
}

bool at_eof(int fd) {
  char c;
  return recv(fd, &c, 1, 0) == 0;
}

void request(int fd) {
  ASSERT_TRUE(write_all(fd, std::string(kRequestBytes, 'q').data(), kRequestBytes));
}
void respond(int fd) {
  ASSERT_TRUE(write_all(fd, std::string(kResponseBytes, 'r').data(), kResponseBytes));
}

class LatencyTest : public ::testing::Test {
 protected:
  void SetUp() override { link_request_tracking(dp_, links_); }

  void protect(uint16_t port) {
    ASSERT_TRUE(dp_.maps().set_ports(
        {{kNormalPort, EDGESHED_CLASS_NORMAL}, {port, EDGESHED_CLASS_NORMAL}}));
  }

  std::optional<PortLatency> latency_of(uint16_t port) const {
    auto all = dp_.maps().read_latency();
    EXPECT_TRUE(all) << all.error().message;
    if (!all) return std::nullopt;
    for (const auto& p : *all)
      if (p.port == port) return p;
    return std::nullopt;
  }

  // The precondition first (how many samples), then the claim (p50 near
  // the known time).
  void expect_measured(uint16_t port, LatencyMeasure m, uint64_t count, double want_s) {
    auto p = latency_of(port);
    ASSERT_TRUE(p.has_value()) << "port " << port << " has no latency slot";
    const auto& h = p->measures[static_cast<size_t>(m)];
    const char* what = m == LatencyMeasure::kResponse ? "response" : "connection";
    ASSERT_EQ(h.count, count) << what << " samples";
    const double p50 = latency_quantile_s(h, 0.5).value_or(0);
    const double mean = static_cast<double>(h.sum_ns) / static_cast<double>(h.count) / 1e9;
    EXPECT_GE(p50, want_s * (1 - kTolerance)) << what << " p50";
    EXPECT_LE(p50, want_s * (1 + kTolerance) + kSlackS) << what << " p50";
    // Every sample is at least the service time; a few slow ones on a
    // loaded machine move the mean up, not the median.
    EXPECT_GE(mean, want_s * (1 - kTolerance)) << what << " mean";
  }

  DataplaneFixture dp_;
  std::vector<BpfLink> links_;
};

// One request per connection: accept at once, answer after the service
// time, close first. Both measures are the service time.
void serve_per_connection(int listener, int n, std::chrono::milliseconds service) {
  for (int i = 0; i < n; ++i) {
    Fd c(accept(listener, nullptr, nullptr));
    ASSERT_TRUE(c.valid());
    ASSERT_TRUE(read_exactly(c.get(), kRequestBytes));
    std::this_thread::sleep_for(service);
    respond(c.get());
  }
}

void clients_per_connection(uint16_t port, int n) {
  for (int i = 0; i < n; ++i) {
    Fd c = connect_loopback(AF_INET, port);
    request(c.get());
    ASSERT_TRUE(read_exactly(c.get(), kResponseBytes));
    ASSERT_TRUE(at_eof(c.get()));  // the server closed first
  }
}

TEST_F(LatencyTest, PerRequestConnectionsServerClosesFirst) {
  // Service time, and connections: fewer of the slower ones.
  const std::pair<std::chrono::milliseconds, int> runs[] = {{20ms, 20}, {50ms, 10}};
  for (const auto& [service, n] : runs) {
    uint16_t port;
    Fd listener = listen_on_loopback(AF_INET, &port);
    protect(port);
    std::thread server(serve_per_connection, listener.get(), n, service);
    clients_per_connection(port, n);
    server.join();
    const double s = std::chrono::duration<double>(service).count();
    expect_measured(port, LatencyMeasure::kResponse, n, s);
    expect_measured(port, LatencyMeasure::kConnection, n, s);
  }
}

TEST_F(LatencyTest, ClientClosesFirstEndsAtTheServersClose) {
  uint16_t port;
  Fd listener = listen_on_loopback(AF_INET, &port);
  protect(port);
  constexpr int kN = 10;
  std::thread server([&] {
    for (int i = 0; i < kN; ++i) {
      Fd c(accept(listener.get(), nullptr, nullptr));
      ASSERT_TRUE(read_exactly(c.get(), kRequestBytes));
      std::this_thread::sleep_for(20ms);
      respond(c.get());
      ASSERT_TRUE(at_eof(c.get()));  // CLOSE_WAIT: the close is LAST_ACK
    }
  });
  for (int i = 0; i < kN; ++i) {
    {
      Fd c = connect_loopback(AF_INET, port);
      request(c.get());
      ASSERT_TRUE(read_exactly(c.get(), kResponseBytes));
    }
    std::this_thread::sleep_for(5ms);  // the server closes before the next one
  }
  server.join();
  expect_measured(port, LatencyMeasure::kResponse, kN, 0.020);
  expect_measured(port, LatencyMeasure::kConnection, kN, 0.020);
}

TEST_F(LatencyTest, KeepAliveGivesOneSamplePerRequest) {
  uint16_t port;
  Fd listener = listen_on_loopback(AF_INET, &port);
  protect(port);
  constexpr int kN = 30;
  std::thread server([&] {
    Fd c(accept(listener.get(), nullptr, nullptr));
    for (int i = 0; i < kN; ++i) {
      ASSERT_TRUE(read_exactly(c.get(), kRequestBytes));
      std::this_thread::sleep_for(20ms);
      // Headers and body apart: still one response.
      ASSERT_TRUE(write_all(c.get(), "HTTP/1.1 200 OK\r\n\r\n", 19));
      respond(c.get());
    }
    ASSERT_TRUE(at_eof(c.get()));
  });
  {
    Fd c = connect_loopback(AF_INET, port);
    for (int i = 0; i < kN; ++i) {
      request(c.get());
      ASSERT_TRUE(read_exactly(c.get(), 19 + kResponseBytes));
      std::this_thread::sleep_for(2ms);  // think time: not in the response time
    }
  }
  server.join();
  expect_measured(port, LatencyMeasure::kResponse, kN, 0.020);
}

TEST_F(LatencyTest, LazyAcceptCountsFromArrival) {
  using Clock = std::chrono::steady_clock;  // CLOCK_MONOTONIC, as bpf_ktime_get_ns()
  uint16_t port;
  Fd listener = listen_on_loopback(AF_INET, &port);
  protect(port);
  constexpr int kN = 8;
  std::vector<Fd> clients;
  clients.reserve(kN);
  std::vector<Clock::time_point> sent_before(kN), sent_after(kN), answer_before(kN),
      answer_after(kN);
  for (int i = 0; i < kN; ++i) {
    clients.push_back(connect_loopback(AF_INET, port));
    sent_before[i] = Clock::now();
    request(clients.back().get());  // arrives while the socket is queued
    sent_after[i] = Clock::now();
  }
  // The requests wait 30 ms in the accept queue, then each takes 20 ms; the
  // queue is FIFO, so the i-th accept() is the i-th client.
  std::this_thread::sleep_for(30ms);
  for (int i = 0; i < kN; ++i) {
    Fd c(accept(listener.get(), nullptr, nullptr));
    ASSERT_TRUE(read_exactly(c.get(), kRequestBytes));
    std::this_thread::sleep_for(20ms);
    answer_before[i] = Clock::now();
    respond(c.get());
    answer_after[i] = Clock::now();
  }
  for (const auto& c : clients) ASSERT_TRUE(read_exactly(c.get(), kResponseBytes));

  auto p = latency_of(port);
  ASSERT_TRUE(p.has_value());
  const auto& h = p->measures[static_cast<size_t>(LatencyMeasure::kResponse)];
  ASSERT_EQ(h.count, static_cast<uint64_t>(kN));
  // Each sample lies between the request's send and the answer's, from
  // arrival (during the client's send) to the first byte (during the
  // server's): the mean is bounded by the test's own clock readings.
  double shortest = 0, longest = 0;
  for (int i = 0; i < kN; ++i) {
    shortest += std::chrono::duration<double>(answer_before[i] - sent_after[i]).count();
    longest += std::chrono::duration<double>(answer_after[i] - sent_before[i]).count();
  }
  const double mean = static_cast<double>(h.sum_ns) / kN / 1e9;
  EXPECT_GE(mean, shortest / kN);
  EXPECT_LE(mean, longest / kN);
  // The queue wait counts: the first answer came 50 ms after its request.
  EXPECT_GE(*latency_quantile_s(h, 0.0), 0.050 * (1 - kTolerance));
}

TEST_F(LatencyTest, SendfileResponsesAreMeasured) {
  uint16_t port;
  Fd listener = listen_on_loopback(AF_INET, &port);
  protect(port);
  Fd file(memfd_create("latency_test_body", MFD_CLOEXEC));
  ASSERT_TRUE(file.valid());
  const std::string body(kResponseBytes, 'f');
  ASSERT_EQ(pwrite(file.get(), body.data(), body.size(), 0), static_cast<ssize_t>(body.size()));
  constexpr int kN = 10;
  std::thread server([&] {
    Fd c(accept(listener.get(), nullptr, nullptr));
    for (int i = 0; i < kN; ++i) {
      ASSERT_TRUE(read_exactly(c.get(), kRequestBytes));
      std::this_thread::sleep_for(20ms);
      off_t off = 0;
      ASSERT_EQ(sendfile(c.get(), file.get(), &off, kResponseBytes),
                static_cast<ssize_t>(kResponseBytes));
    }
  });
  {
    Fd c = connect_loopback(AF_INET, port);
    for (int i = 0; i < kN; ++i) {
      request(c.get());
      ASSERT_TRUE(read_exactly(c.get(), kResponseBytes));
    }
  }
  server.join();
  expect_measured(port, LatencyMeasure::kResponse, kN, 0.020);
}

TEST_F(LatencyTest, FinOnlyArrivalStartsNoRequest) {
  uint16_t port;
  Fd listener = listen_on_loopback(AF_INET, &port);
  protect(port);
  Fd client = connect_loopback(AF_INET, port);
  Fd server(accept(listener.get(), nullptr, nullptr));
  request(client.get());
  ASSERT_TRUE(read_exactly(server.get(), kRequestBytes));
  std::this_thread::sleep_for(20ms);
  respond(server.get());
  ASSERT_TRUE(read_exactly(client.get(), kResponseBytes));
  ASSERT_EQ(shutdown(client.get(), SHUT_WR), 0);  // a FIN, no data
  ASSERT_TRUE(at_eof(server.get()));
  respond(server.get());  // more sent after the FIN: no request was open
  auto p = latency_of(port);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->measures[static_cast<size_t>(LatencyMeasure::kResponse)].count, 1u);
}

TEST_F(LatencyTest, UnprotectedPortRecordsNothing) {
  uint16_t port;
  Fd listener = listen_on_loopback(AF_INET, &port);  // not in the port table
  std::thread server(serve_per_connection, listener.get(), 5, 5ms);
  clients_per_connection(port, 5);
  server.join();
  auto all = dp_.maps().read_latency();
  ASSERT_TRUE(all) << all.error().message;
  ASSERT_FALSE(all->empty());  // the fixture's protected ports have slots
  for (const auto& p : *all) {
    EXPECT_NE(p.port, port);
    for (const auto& h : p.measures) EXPECT_EQ(h.count, 0u) << "port " << p.port;
  }
}

TEST_F(LatencyTest, SlotsAreStableAndLimited) {
  auto slots_before = dp_.maps().read_latency().value();
  ASSERT_EQ(slots_before.size(), 3u);  // the fixture's three ports
  std::vector<PortClass> many;
  for (uint32_t p = 10000; p < 10000 + EDGESHED_MAX_LATENCY_PORTS + 8; ++p) {
    many.push_back({static_cast<uint16_t>(p), EDGESHED_CLASS_NORMAL});
  }
  many.push_back({kCriticalPort, EDGESHED_CLASS_CRITICAL});  // kept: it had a slot
  ASSERT_TRUE(dp_.maps().set_ports(many));
  auto measured = dp_.maps().read_latency().value();
  auto unmeasured = dp_.maps().unmeasured_ports().value();
  EXPECT_EQ(measured.size(), static_cast<size_t>(EDGESHED_MAX_LATENCY_PORTS));
  EXPECT_EQ(unmeasured.size(), many.size() - EDGESHED_MAX_LATENCY_PORTS);
  bool critical_measured = false;
  for (const auto& p : measured) critical_measured = critical_measured || p.port == kCriticalPort;
  EXPECT_TRUE(critical_measured);
}

TEST_F(LatencyTest, ASlotGivenToAnotherPortTakesNoSampleOfItsFormerPort) {
  uint16_t old_port, new_port;
  Fd old_listener = listen_on_loopback(AF_INET, &old_port);
  Fd new_listener = listen_on_loopback(AF_INET, &new_port);
  auto with = [](uint16_t port) {
    return std::vector<PortClass>{{kNormalPort, EDGESHED_CLASS_NORMAL},
                                  {kCriticalPort, EDGESHED_CLASS_CRITICAL},
                                  {kBackgroundPort, EDGESHED_CLASS_BACKGROUND},
                                  {port, EDGESHED_CLASS_NORMAL}};
  };
  ASSERT_TRUE(dp_.maps().set_ports(with(old_port)));
  Fd client = connect_loopback(AF_INET, old_port);
  Fd server(accept(old_listener.get(), nullptr, nullptr));
  request(client.get());
  ASSERT_TRUE(read_exactly(server.get(), kRequestBytes));

  // The old port leaves the table; the new one takes its free slot.
  ASSERT_TRUE(dp_.maps().set_ports(with(new_port)));
  ASSERT_FALSE(latency_of(old_port).has_value());
  ASSERT_TRUE(latency_of(new_port).has_value());
  respond(server.get());  // the old connection's answer
  ASSERT_TRUE(read_exactly(client.get(), kResponseBytes));
  const auto now = latency_of(new_port);
  ASSERT_TRUE(now.has_value());
  for (const auto& h : now->measures) EXPECT_EQ(h.count, 0u);
}

}  // namespace
}  // namespace edgeshed::testing
