// The age of the requests in service, kept in the kernel against real
// loopback connections, and the queue gate that reads it: exact sums after
// 10^5 requests of every shape with long polls held beside them, and a gate
// that shuts on requests still waiting past its age, not on a few held ones.
#include <bpf/libbpf.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "bpf/dataplane_fixture.h"
#include "bpf/tracked_loopback.h"
#include "common/fd.h"
#include "common/loopback.h"
#include "common/packet.h"
#include "edgeshed.skel.h"

namespace edgeshed::testing {
namespace {

using namespace std::chrono_literals;

constexpr const char* kRequest = kHttpRequest;
constexpr size_t kRequestBytes = kHttpRequestBytes;
constexpr const char* kResponse = kHttpResponse;
constexpr size_t kResponseBytes = kHttpResponseBytes;
// The gate's age in the gate tests: its slices are 33.5 ms (2^25 ns).
constexpr uint32_t kGateAgeUs = 200'000;

// Sleeps until the requests that entered service at `sent` (and in the
// slice after it, should the sends have crossed into it) are the two slices
// the gate reads: the middle of that 33.5 ms span, so that a test thread
// woken late by a busy machine still reads them.
void sleep_until_the_gate_reads(uint64_t sent) {
  const uint64_t age = uint64_t{kGateAgeUs} * 1000;
  const uint32_t shift = edgeshed_cohort_shift(age);
  const uint64_t slice = sent >> shift;
  // edgeshed_cohort_due() is slice + 1 from (slice + 2) << shift + age on.
  const uint64_t due_from = ((slice + 2) << shift) + age;
  const uint64_t target = due_from + (uint64_t{1} << shift) / 2;
  const uint64_t now = monotonic_ns();
  if (target > now) std::this_thread::sleep_for(std::chrono::nanoseconds(target - now));
  ASSERT_EQ(edgeshed_cohort_due(monotonic_ns(), age), slice + 1) << "woken too late to read";
}

class RequestAgeTest : public TrackedLoopbackTest {
 protected:
  uint64_t in_service() const {
    return dp_.maps().read_inflight_classes().value()[EDGESHED_CLASS_NORMAL];
  }
  // Counts change in softirq context: wait for them rather than race.
  void wait_in_service(uint64_t want) const {
    const auto deadline = std::chrono::steady_clock::now() + 3s;
    while (in_service() != want && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(1ms);
    }
    ASSERT_EQ(in_service(), want);
  }

  // A request read and answered, and the answer read.
  static void serve(const Pair& p) {
    send_bytes(p.client.get(), kRequest, kRequestBytes);
    read_bytes(p.server.get(), kRequestBytes);
    send_bytes(p.server.get(), kResponse, kResponseBytes);
    read_bytes(p.client.get(), kResponseBytes);
  }

  void gate_at(uint32_t age_us) const {
    edgeshed_class_policy pol{};
    pol.queue_age_us = age_us;
    dp_.set_class_policy(EDGESHED_CLASS_NORMAL, pol);
  }
  Verdict syn() const {
    return dp_.run(Entry::kXdp, PacketBuilder::syn_v4(40000, kNormalPort, "192.0.2.1").build())
        .verdict;
  }
  uint64_t gate_count() const { return dp_.stats().global[EDGESHED_GCTR_QUEUE_GATE]; }
  bool evidence() const { return dp_.maps().read_queue_evidence().value()[EDGESHED_CLASS_NORMAL]; }
};

// Three long polls stay in service while 10^5 requests of every shape come
// and go beside them: afterwards the sums give exactly the polls' ages (a
// lost or doubled entry or exit would be off by the clock's whole value).
TEST_F(RequestAgeTest, AgesAreExactAfterManyRequestsBesideLongPolls) {
  constexpr int kPolls = 3;
  std::vector<Pair> polls;
  polls.reserve(kPolls);
  uint64_t entered_after = 0;   // the sum of the polls' entry times lies
  uint64_t entered_before = 0;  // between these two
  for (int i = 0; i < kPolls; ++i) {
    polls.push_back(open_pair());
    entered_before += monotonic_ns();
    send_bytes(polls.back().client.get(), kRequest, kRequestBytes);
    wait_in_service(static_cast<uint64_t>(i) + 1);
    entered_after += monotonic_ns();
  }

  constexpr int kConnections = 100;
  constexpr int kRounds = 1000;  // 10^5 requests
  std::vector<Pair> pairs;
  pairs.reserve(kConnections);
  for (int i = 0; i < kConnections; ++i) pairs.push_back(open_pair());
  for (int round = 0; round < kRounds; ++round) {
    for (int i = 0; i < kConnections; ++i) {
      Pair& p = pairs[static_cast<size_t>(i)];
      switch ((round + i) % 50) {
        case 1: {  // pipelined: two requests in one write, two answers
          std::string two = std::string(kRequest) + kRequest;
          send_bytes(p.client.get(), two.data(), two.size());
          read_bytes(p.server.get(), kRequestBytes);
          send_bytes(p.server.get(), kResponse, kResponseBytes);
          read_bytes(p.server.get(), kRequestBytes);
          send_bytes(p.server.get(), kResponse, kResponseBytes);
          read_bytes(p.client.get(), 2 * kResponseBytes);
          break;
        }
        case 2:  // the client resets with its request in service
          send_bytes(p.client.get(), kRequest, kRequestBytes);
          reset_on_close(p.client.get());
          p = open_pair();
          break;
        case 3:  // half-closed after the request, answered, closed
          send_bytes(p.client.get(), kRequest, kRequestBytes);
          ASSERT_EQ(shutdown(p.client.get(), SHUT_WR), 0);
          read_bytes(p.server.get(), kRequestBytes);
          send_bytes(p.server.get(), kResponse, kResponseBytes);
          read_bytes(p.client.get(), kResponseBytes);
          p = open_pair();
          break;
        case 4:  // the server resets with the request unanswered
          send_bytes(p.client.get(), kRequest, kRequestBytes);
          read_bytes(p.server.get(), kRequestBytes);
          reset_on_close(p.server.get());
          p = open_pair();
          break;
        default:
          serve(p);
      }
    }
  }
  pairs.clear();
  wait_in_service(kPolls);

  const auto counts = dp_.maps().read_inflight_classes().value();
  const uint64_t read_from = monotonic_ns();
  const uint64_t class_age = dp_.maps().read_inflight_ages(counts).value()[EDGESHED_CLASS_NORMAL];
  const uint64_t port_age = dp_.maps().read_inflight_age_port(port_).value();
  const uint64_t read_until = monotonic_ns();
  for (uint64_t age : {class_age, port_age}) {
    EXPECT_GE(age, kPolls * read_from - entered_after);
    EXPECT_LE(age, kPolls * read_until - entered_before);
  }
  // The polls answered: nothing in service, no age left.
  for (const Pair& p : polls) {
    read_bytes(p.server.get(), kRequestBytes);
    send_bytes(p.server.get(), kResponse, kResponseBytes);
  }
  wait_in_service(0);
  EXPECT_EQ(dp_.maps().read_inflight_ages(ClassCounts{}).value()[EDGESHED_CLASS_NORMAL], 0u);
  EXPECT_EQ(dp_.maps().read_inflight_age_port(port_).value(), 0u);
}

// Requests still waiting past the gate's age: the next SYN is shed as at the
// cap, counted as the gate's; once they are answered, the gate opens.
TEST_F(RequestAgeTest, TheGateShutsOnRequestsWaitingPastItsAge) {
  gate_at(kGateAgeUs);
  constexpr int kWaiting = 8;
  std::vector<Pair> pairs;
  pairs.reserve(kWaiting);
  for (int i = 0; i < kWaiting; ++i) pairs.push_back(open_pair());
  const uint64_t sent = monotonic_ns();
  for (const Pair& p : pairs) send_bytes(p.client.get(), kRequest, kRequestBytes);
  wait_in_service(kWaiting);
  EXPECT_EQ(syn(), Verdict::kPass) << "younger than the gate's age";
  sleep_until_the_gate_reads(sent);
  EXPECT_TRUE(evidence());
  EXPECT_EQ(syn(), Verdict::kDrop);
  EXPECT_EQ(gate_count(), 1u);
  EXPECT_EQ(dp_.stats().cls[EDGESHED_CLASS_NORMAL][EDGESHED_CTR_SHED_CAP], 1u);

  for (const Pair& p : pairs) {
    read_bytes(p.server.get(), kRequestBytes);
    send_bytes(p.server.get(), kResponse, kResponseBytes);
  }
  wait_in_service(0);
  EXPECT_FALSE(evidence());
  EXPECT_EQ(syn(), Verdict::kPass);
  EXPECT_EQ(gate_count(), 1u);
}

// Two long polls held beside ten short requests of the same moment are no
// queue: most of that cohort was answered at once.
TEST_F(RequestAgeTest, LongPollsBesideShortRequestsAreNoQueue) {
  gate_at(kGateAgeUs);
  std::vector<Pair> polls, shorts;
  polls.reserve(2);
  shorts.reserve(10);
  for (int i = 0; i < 2; ++i) polls.push_back(open_pair());
  for (int i = 0; i < 10; ++i) shorts.push_back(open_pair());
  const uint64_t sent = monotonic_ns();
  for (const Pair& p : polls) send_bytes(p.client.get(), kRequest, kRequestBytes);
  for (const Pair& p : shorts) serve(p);
  wait_in_service(2);
  sleep_until_the_gate_reads(sent);
  EXPECT_FALSE(evidence());
  EXPECT_EQ(syn(), Verdict::kPass);
  EXPECT_EQ(gate_count(), 0u);
}

// Without an age in its policy a class has no gate, however old its
// requests: nothing is sorted into cohorts either.
TEST_F(RequestAgeTest, NoAgeNoGate) {
  std::vector<Pair> pairs;
  pairs.reserve(8);
  for (int i = 0; i < 8; ++i) pairs.push_back(open_pair());
  const uint64_t sent = monotonic_ns();
  for (const Pair& p : pairs) send_bytes(p.client.get(), kRequest, kRequestBytes);
  wait_in_service(8);
  sleep_until_the_gate_reads(sent);
  gate_at(kGateAgeUs);  // now: the requests entered service before it
  EXPECT_FALSE(evidence());
  EXPECT_EQ(syn(), Verdict::kPass);
  EXPECT_EQ(gate_count(), 0u);
}

}  // namespace
}  // namespace edgeshed::testing
