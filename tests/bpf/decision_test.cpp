// Each step of the decision, each mode and action, with the counters.
#include <gtest/gtest.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <string>
#include <thread>

#include "bpf/dataplane_fixture.h"
#include "edgeshed.skel.h"

namespace edgeshed::testing {
namespace {

constexpr uint64_t kSecond = 1000000000ull;
constexpr uint32_t kHalf = EDGESHED_FRAC_ONE / 2;

class DecisionTest : public ::testing::TestWithParam<Entry> {
 protected:
  Verdict syn(uint16_t dport = kNormalPort, const std::string& src = "192.0.2.1") {
    return dp_.run(GetParam(), PacketBuilder::syn_v4(40000, dport, src).build()).verdict;
  }
  uint64_t count(uint32_t cls, int ctr) { return dp_.stats().cls[cls][ctr]; }

  DataplaneFixture dp_;
};

TEST_P(DecisionTest, AllZeroPolicyAdmitsEverything) {
  for (uint16_t port : {kNormalPort, kCriticalPort, kBackgroundPort})
    EXPECT_EQ(syn(port), Verdict::kPass);
  EXPECT_EQ(count(EDGESHED_CLASS_NORMAL, EDGESHED_CTR_ADMITTED), 1u);
  EXPECT_EQ(count(EDGESHED_CLASS_CRITICAL, EDGESHED_CTR_ADMITTED), 1u);
  EXPECT_EQ(count(EDGESHED_CLASS_BACKGROUND, EDGESHED_CTR_ADMITTED), 1u);
}

TEST_P(DecisionTest, ModeOffPassesBeforeAnythingElse) {
  dp_.set_class_policy(EDGESHED_CLASS_NORMAL, kShedAll);
  auto cfg = dp_.config();
  cfg.mode = EDGESHED_MODE_OFF;
  dp_.set_config(cfg);
  EXPECT_EQ(syn(), Verdict::kPass);
  EXPECT_EQ(count(EDGESHED_CLASS_NORMAL, EDGESHED_CTR_PASS_MODE_OFF), 1u);
  EXPECT_EQ(count(EDGESHED_CLASS_NORMAL, EDGESHED_CTR_SHED_FRAC), 0u);
}

TEST_P(DecisionTest, StaleHeartbeatFailsOpen) {
  dp_.set_class_policy(EDGESHED_CLASS_NORMAL, kShedAll);
  auto cfg = dp_.config();
  cfg.heartbeat_timeout_ns = kSecond;
  dp_.set_config(cfg);

  dp_.set_heartbeat(monotonic_ns() - 5 * kSecond);
  EXPECT_EQ(syn(), Verdict::kPass);
  EXPECT_EQ(count(EDGESHED_CLASS_NORMAL, EDGESHED_CTR_FAIL_OPEN), 1u);

  dp_.set_heartbeat(monotonic_ns());
  EXPECT_EQ(syn(), Verdict::kDrop);
  EXPECT_EQ(count(EDGESHED_CLASS_NORMAL, EDGESHED_CTR_SHED_FRAC), 1u);

  // A never-written heartbeat is stale too: fail open from the first packet.
  dp_.set_heartbeat(0);
  EXPECT_EQ(syn(), Verdict::kPass);
  EXPECT_EQ(count(EDGESHED_CLASS_NORMAL, EDGESHED_CTR_FAIL_OPEN), 2u);
}

TEST_P(DecisionTest, ZeroTimeoutKeepsTheLastPolicy) {
  dp_.set_class_policy(EDGESHED_CLASS_NORMAL, kShedAll);
  dp_.set_heartbeat(monotonic_ns() - 3600 * kSecond);
  EXPECT_EQ(syn(), Verdict::kDrop);
}

TEST_P(DecisionTest, InflightCapShedsAtTheCap) {
  dp_.set_class_policy(EDGESHED_CLASS_NORMAL, {0, 5, 0, 0, 0, 0});
  dp_.set_inflight(EDGESHED_CLASS_NORMAL, 4);
  EXPECT_EQ(syn(), Verdict::kPass);
  dp_.set_inflight(EDGESHED_CLASS_NORMAL, 5);
  EXPECT_EQ(syn(), Verdict::kDrop);
  dp_.set_inflight(EDGESHED_CLASS_NORMAL, 6);
  EXPECT_EQ(syn(), Verdict::kDrop);
  EXPECT_EQ(count(EDGESHED_CLASS_NORMAL, EDGESHED_CTR_ADMITTED), 1u);
  EXPECT_EQ(count(EDGESHED_CLASS_NORMAL, EDGESHED_CTR_SHED_CAP), 2u);
  // Other classes have their own count and cap.
  EXPECT_EQ(syn(kCriticalPort), Verdict::kPass);
  dp_.set_inflight(EDGESHED_CLASS_NORMAL, 0);
}

// The cap limits requests in service; idle connections, however many, do
// not count against it. The connection cap, an operator's, counts them.
TEST_P(DecisionTest, ConnectionCapIsSeparateFromTheRequestCap) {
  dp_.set_class_policy(EDGESHED_CLASS_NORMAL, {0, 5, 0, 0, 0, 0});
  dp_.set_connections(EDGESHED_CLASS_NORMAL, 10000);
  EXPECT_EQ(syn(), Verdict::kPass);
  dp_.set_class_policy(EDGESHED_CLASS_NORMAL, {0, 0, 0, 0, 100, 0});
  dp_.set_connections(EDGESHED_CLASS_NORMAL, 99);
  EXPECT_EQ(syn(), Verdict::kPass);
  dp_.set_connections(EDGESHED_CLASS_NORMAL, 100);
  EXPECT_EQ(syn(), Verdict::kDrop);
  EXPECT_EQ(count(EDGESHED_CLASS_NORMAL, EDGESHED_CTR_SHED_CAP), 1u);
  dp_.set_connections(EDGESHED_CLASS_NORMAL, 0);
}

TEST_P(DecisionTest, ShedFractionAllAndNone) {
  dp_.set_class_policy(EDGESHED_CLASS_BACKGROUND, kShedAll);
  EXPECT_EQ(syn(kBackgroundPort), Verdict::kDrop);
  EXPECT_EQ(syn(kNormalPort), Verdict::kPass);
  EXPECT_EQ(count(EDGESHED_CLASS_BACKGROUND, EDGESHED_CTR_SHED_FRAC), 1u);
}

std::string source(int i) { return "198.51.100." + std::to_string(i % 250 + 1); }

TEST_P(DecisionTest, SourceHashIsConsistentPerClientAndSplitsClients) {
  dp_.set_class_policy(EDGESHED_CLASS_NORMAL, {kHalf, 0, 0, 0, 0, 0}, /*salt=*/1);
  int shed = 0;
  for (int i = 0; i < 250; ++i) {
    Verdict first = syn(kNormalPort, source(i));
    for (int k = 0; k < 3; ++k) EXPECT_EQ(syn(kNormalPort, source(i)), first) << source(i);
    shed += first == Verdict::kDrop;
  }
  EXPECT_GT(shed, 80);  // half of 250, with a wide margin
  EXPECT_LT(shed, 170);

  // A new salt draws a new set of clients.
  std::vector<Verdict> before, after;
  for (int i = 0; i < 250; ++i) before.push_back(syn(kNormalPort, source(i)));
  dp_.set_class_policy(EDGESHED_CLASS_NORMAL, {kHalf, 0, 0, 0, 0, 0}, /*salt=*/2);
  for (int i = 0; i < 250; ++i) after.push_back(syn(kNormalPort, source(i)));
  EXPECT_NE(before, after);
}

// The draw hashes a prefix of the source: by default an IPv6 client's whole
// /64, so it cannot retry from its next address until it is admitted.
TEST_P(DecisionTest, SourceHashCoversTheConfiguredPrefix) {
  auto v6 = [this](int i) {
    char addr[64];
    (void)std::snprintf(addr, sizeof(addr), "2001:db8:0:%x::%x", i / 16, i % 16 + 1);
    return dp_.run(GetParam(), PacketBuilder::syn_v6(40000, kNormalPort, addr).build()).verdict;
  };
  dp_.set_class_policy(EDGESHED_CLASS_NORMAL, {kHalf, 0, 0, 0, 0, 0}, /*salt=*/1);
  // 16 /64s of 16 addresses each: one verdict per /64, and both verdicts.
  int shed_nets = 0;
  for (int net = 0; net < 16; ++net) {
    const Verdict first = v6(net * 16);
    for (int i = 1; i < 16; ++i)
      EXPECT_EQ(v6(net * 16 + i), first) << "net " << net << " host " << i;
    shed_nets += first == Verdict::kDrop;
  }
  EXPECT_GT(shed_nets, 0);
  EXPECT_LT(shed_nets, 16);

  // /128: the addresses of one /64 draw apart.
  auto cfg = dp_.config();
  cfg.hash_prefix6 = 128;
  cfg.hash_prefix4 = 24;
  dp_.set_config(cfg);
  int shed_hosts = 0;
  for (int i = 0; i < 16; ++i) shed_hosts += v6(i) == Verdict::kDrop;
  EXPECT_GT(shed_hosts, 0);
  EXPECT_LT(shed_hosts, 16);
  // IPv4 /24: one verdict for all of 198.51.100.0/24.
  const Verdict first = syn(kNormalPort, source(0));
  for (int i = 1; i < 250; ++i) EXPECT_EQ(syn(kNormalPort, source(i)), first) << source(i);
}

TEST_P(DecisionTest, RandomDrawVariesPerSyn) {
  auto cfg = dp_.config();
  cfg.draw = EDGESHED_DRAW_RANDOM;
  dp_.set_config(cfg);
  dp_.set_class_policy(EDGESHED_CLASS_NORMAL, {kHalf, 0, 0, 0, 0, 0});
  int shed = 0;
  for (int i = 0; i < 400; ++i) shed += syn() == Verdict::kDrop;
  EXPECT_GT(shed, 120);
  EXPECT_LT(shed, 280);
}

TEST_P(DecisionTest, TokenBucketAdmitsTheBurstThenSheds) {
  dp_.set_class_policy(EDGESHED_CLASS_NORMAL, {0, 0, 1, 3, 0, 0});
  // A fresh bucket is full. At 1/s, nothing refills during the runs.
  EXPECT_EQ(syn(), Verdict::kPass);
  EXPECT_EQ(syn(), Verdict::kPass);
  EXPECT_EQ(syn(), Verdict::kPass);
  EXPECT_EQ(syn(), Verdict::kDrop);
  EXPECT_EQ(count(EDGESHED_CLASS_NORMAL, EDGESHED_CTR_SHED_RATE), 1u);
  EXPECT_EQ(count(EDGESHED_CLASS_NORMAL, EDGESHED_CTR_ADMITTED), 3u);
}

// Another CPU moved the class's due time ahead between this CPU's clock
// read and its take: that time is spent, so nothing is granted, and the due
// time neither goes back nor moves on for the refusals.
TEST_P(DecisionTest, TokenBucketGrantsNothingWhileTheNextTokenIsDueLater) {
  dp_.set_class_policy(EDGESHED_CLASS_NORMAL, {0, 0, 1, 3, 0, 0});
  const int fd = bpf_map__fd(dp_.skeleton()->maps.es_buckets);
  ASSERT_EQ(bpf_map__value_size(dp_.skeleton()->maps.es_buckets), sizeof(uint64_t));
  timespec ts{};
  ASSERT_EQ(clock_gettime(CLOCK_MONOTONIC, &ts), 0);
  const uint64_t later = static_cast<uint64_t>(ts.tv_sec) * kSecond + ts.tv_nsec + 10 * kSecond;
  const uint32_t key = EDGESHED_CLASS_NORMAL;
  ASSERT_EQ(bpf_map_update_elem(fd, &key, &later, BPF_ANY), 0);
  EXPECT_EQ(syn(), Verdict::kDrop);
  EXPECT_EQ(syn(), Verdict::kDrop);
  EXPECT_EQ(count(EDGESHED_CLASS_NORMAL, EDGESHED_CTR_SHED_RATE), 2u);
  uint64_t after = 0;
  ASSERT_EQ(bpf_map_lookup_elem(fd, &key, &after), 0);
  EXPECT_EQ(after, later);
}

// An idle class gets its whole burst again, not every interval since.
TEST_P(DecisionTest, TokenBucketRefillsToItsBurstAfterIdling) {
  dp_.set_class_policy(EDGESHED_CLASS_NORMAL, {0, 0, 1, 2, 0, 0});
  const int fd = bpf_map__fd(dp_.skeleton()->maps.es_buckets);
  const uint32_t key = EDGESHED_CLASS_NORMAL;
  const uint64_t long_ago = 1;  // the monotonic clock's first nanosecond
  ASSERT_EQ(bpf_map_update_elem(fd, &key, &long_ago, BPF_ANY), 0);
  EXPECT_EQ(syn(), Verdict::kPass);
  EXPECT_EQ(syn(), Verdict::kPass);
  EXPECT_EQ(syn(), Verdict::kDrop);
}

// The due time is one word shared by every CPU, taken without a lock: two
// CPUs flooding the class draw its rate once, not once each.
TEST_P(DecisionTest, TwoCpusFloodingAClassShareItsRate) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "one CPU";
  constexpr uint32_t kRate = 1000, kBurst = 50;
  dp_.set_class_policy(EDGESHED_CLASS_NORMAL, {0, 0, kRate, kBurst, 0, 0});
  const auto flood = flood_two_cpus(
      dp_, GetParam(), PacketBuilder::syn_v4(40000, kNormalPort, "203.0.113.9").build(),
      Verdict::kPass);
  ASSERT_NO_FATAL_FAILURE(expect_shared_rate(flood, kRate, kBurst, "admitted"));
  EXPECT_EQ(count(EDGESHED_CLASS_NORMAL, EDGESHED_CTR_SHED_RATE), flood.sent - flood.counted);
}

TEST_P(DecisionTest, ReasonsAreCheckedInOrderCapFractionRate) {
  dp_.set_class_policy(EDGESHED_CLASS_NORMAL, {EDGESHED_FRAC_ONE, 1, 1, 1, 0, 0});
  dp_.set_inflight(EDGESHED_CLASS_NORMAL, 1);
  EXPECT_EQ(syn(), Verdict::kDrop);
  EXPECT_EQ(count(EDGESHED_CLASS_NORMAL, EDGESHED_CTR_SHED_CAP), 1u);
  dp_.set_inflight(EDGESHED_CLASS_NORMAL, 0);
  EXPECT_EQ(syn(), Verdict::kDrop);
  EXPECT_EQ(count(EDGESHED_CLASS_NORMAL, EDGESHED_CTR_SHED_FRAC), 1u);
  EXPECT_EQ(count(EDGESHED_CLASS_NORMAL, EDGESHED_CTR_SHED_RATE), 0u);
}

TEST_P(DecisionTest, ObserveModeCountsWouldShedAndPasses) {
  auto cfg = dp_.config();
  cfg.mode = EDGESHED_MODE_OBSERVE;
  dp_.set_config(cfg);
  dp_.set_class_policy(EDGESHED_CLASS_NORMAL, kShedAll);
  dp_.set_class_policy(EDGESHED_CLASS_BACKGROUND, {0, 2, 0, 0, 0, 0});
  dp_.set_inflight(EDGESHED_CLASS_BACKGROUND, 2);
  EXPECT_EQ(syn(), Verdict::kPass);
  EXPECT_EQ(syn(kBackgroundPort), Verdict::kPass);
  EXPECT_EQ(count(EDGESHED_CLASS_NORMAL, EDGESHED_CTR_WOULD_SHED_FRAC), 1u);
  EXPECT_EQ(count(EDGESHED_CLASS_BACKGROUND, EDGESHED_CTR_WOULD_SHED_CAP), 1u);
  EXPECT_EQ(count(EDGESHED_CLASS_NORMAL, EDGESHED_CTR_SHED_FRAC), 0u);
  EXPECT_EQ(count(EDGESHED_CLASS_BACKGROUND, EDGESHED_CTR_SHED_CAP), 0u);
  dp_.set_inflight(EDGESHED_CLASS_BACKGROUND, 0);
}

TEST_P(DecisionTest, ObserveModeDoesNotSpendTokens) {
  auto cfg = dp_.config();
  cfg.mode = EDGESHED_MODE_OBSERVE;
  dp_.set_config(cfg);
  dp_.set_class_policy(EDGESHED_CLASS_NORMAL, {0, 0, 1, 1, 0, 0});
  EXPECT_EQ(syn(), Verdict::kPass);  // takes the one token
  EXPECT_EQ(syn(), Verdict::kPass);  // would shed
  EXPECT_EQ(count(EDGESHED_CLASS_NORMAL, EDGESHED_CTR_ADMITTED), 1u);
  EXPECT_EQ(count(EDGESHED_CLASS_NORMAL, EDGESHED_CTR_WOULD_SHED_RATE), 1u);
}

TEST_P(DecisionTest, RstActionAnswersAndIsBudgeted) {
  auto cfg = dp_.config();
  cfg.action = EDGESHED_ACTION_RST;
  cfg.rst_per_sec_per_cpu = 2;
  dp_.set_config(cfg);
  dp_.set_class_policy(EDGESHED_CLASS_NORMAL, kShedAll);
  EXPECT_EQ(syn(), Verdict::kTx);
  EXPECT_EQ(syn(), Verdict::kTx);
  EXPECT_EQ(syn(), Verdict::kDrop);  // budget of this CPU and second spent
  EXPECT_EQ(count(EDGESHED_CLASS_NORMAL, EDGESHED_CTR_RST_SENT), 2u);
  EXPECT_EQ(count(EDGESHED_CLASS_NORMAL, EDGESHED_CTR_RST_CAPPED), 1u);
  EXPECT_EQ(count(EDGESHED_CLASS_NORMAL, EDGESHED_CTR_SHED_FRAC), 3u);
  usleep(1100000);  // next window
  EXPECT_EQ(syn(), Verdict::kTx);
}

TEST_P(DecisionTest, SourcePrefixOverridesThePortClass) {
  dp_.set_class_policy(EDGESHED_CLASS_NORMAL, kShedAll);
  ASSERT_TRUE(
      dp_.maps().set_prefix(parse_ip_prefix("192.0.2.0/24").value(), EDGESHED_CLASS_CRITICAL));
  ASSERT_TRUE(
      dp_.maps().set_prefix(parse_ip_prefix("2001:db8:1::/48").value(), EDGESHED_CLASS_CRITICAL));
  EXPECT_EQ(dp_.config().src4_prefixes, 1u);
  EXPECT_EQ(dp_.config().src6_prefixes, 1u);

  EXPECT_EQ(syn(kNormalPort, "192.0.2.77"), Verdict::kPass);     // health checker
  EXPECT_EQ(syn(kNormalPort, "198.51.100.77"), Verdict::kDrop);  // everyone else
  auto v6 = [&](const std::string& src) {
    return dp_.run(GetParam(), PacketBuilder::syn_v6(40000, kNormalPort, src).build()).verdict;
  };
  EXPECT_EQ(v6("2001:db8:1::5"), Verdict::kPass);
  EXPECT_EQ(v6("2001:db8:2::5"), Verdict::kDrop);
  EXPECT_EQ(count(EDGESHED_CLASS_CRITICAL, EDGESHED_CTR_ADMITTED), 2u);
  EXPECT_EQ(count(EDGESHED_CLASS_NORMAL, EDGESHED_CTR_SHED_FRAC), 2u);

  // A noisy tenant demoted to background.
  ASSERT_TRUE(dp_.maps().set_prefix(parse_ip_prefix("198.51.100.128/25").value(),
                                    EDGESHED_CLASS_BACKGROUND));
  EXPECT_EQ(syn(kNormalPort, "198.51.100.200"), Verdict::kPass);
  EXPECT_EQ(count(EDGESHED_CLASS_BACKGROUND, EDGESHED_CTR_ADMITTED), 1u);

  ASSERT_TRUE(dp_.maps().remove_prefix(parse_ip_prefix("192.0.2.0/24").value()));
  EXPECT_EQ(dp_.config().src4_prefixes, 1u);
  EXPECT_EQ(syn(kNormalPort, "192.0.2.77"), Verdict::kDrop);
}

TEST_P(DecisionTest, CountersAddUpToTheSynsSeen) {
  dp_.set_class_policy(EDGESHED_CLASS_NORMAL, {kHalf, 0, 0, 0, 0, 0});
  int passed = 0, dropped = 0;
  for (int i = 0; i < 200; ++i) {
    Verdict v = syn(kNormalPort, source(i));
    passed += v == Verdict::kPass;
    dropped += v == Verdict::kDrop;
  }
  auto s = dp_.stats();
  EXPECT_EQ(passed + dropped, 200);
  EXPECT_EQ(s.cls[EDGESHED_CLASS_NORMAL][EDGESHED_CTR_ADMITTED], static_cast<uint64_t>(passed));
  EXPECT_EQ(s.cls[EDGESHED_CLASS_NORMAL][EDGESHED_CTR_SHED_FRAC], static_cast<uint64_t>(dropped));
  EXPECT_EQ(all_class_counters(s), 200u);
}

INSTANTIATE_TEST_SUITE_P(Entries, DecisionTest, ::testing::Values(Entry::kXdp, Entry::kTc),
                         entry_name);

}  // namespace
}  // namespace edgeshed::testing
