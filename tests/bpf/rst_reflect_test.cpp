// The reflection limit on RSTs: a burst from one network is refused at once,
// a sustained flood toward one network draws at most its rate, networks do
// not share a limit, and a flood from every address keeps the LRU within its
// size while the per-CPU ceiling holds.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "bpf/dataplane_fixture.h"
#include "edgeshed.skel.h"

namespace edgeshed::testing {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kIpv4At = 14, kIpv4Len = 20, kIpv4ChecksumAt = 10, kIpv4SrcAt = 12;

edgeshed_rst_reflect defaults() {
  return {EDGESHED_DEFAULT_RST_REFLECT_PER_SEC, EDGESHED_DEFAULT_RST_REFLECT_BURST,
          EDGESHED_DEFAULT_RST_REFLECT_PREFIX4, EDGESHED_DEFAULT_RST_REFLECT_PREFIX6,
          EDGESHED_DEFAULT_RST_REFLECT_PER_CONN};
}

class RstReflectTest : public ::testing::TestWithParam<Entry> {
 protected:
  // Enforce, RST, every normal SYN shed; the ceiling far above the limit
  // unless a test lowers it.
  void shed_all_with_rst(const edgeshed_rst_reflect& limit, uint32_t ceiling = 10'000'000) {
    auto cfg = dp_.config();
    cfg.action = EDGESHED_ACTION_RST;
    cfg.rst_per_sec_per_cpu = ceiling;
    cfg.rst_reflect = limit;
    dp_.set_config(cfg);
    dp_.set_class_policy(EDGESHED_CLASS_NORMAL, kShedAll);
  }
  Verdict syn_v4(const std::string& src, uint16_t sport = 40000) {
    return dp_.run(GetParam(), PacketBuilder::syn_v4(sport, kNormalPort, src).build()).verdict;
  }
  Verdict syn_v6(const std::string& src) {
    return dp_.run(GetParam(), PacketBuilder::syn_v6(40000, kNormalPort, src).build()).verdict;
  }
  uint64_t global(int counter) { return dp_.stats().global[counter]; }
  struct Flood {
    uint64_t sent = 0, rst = 0;
    double took_s = 0;
  };
  // Runs the frames in turn for `duration` (3,000,000 runs at the most),
  // counting the RSTs that came back.
  Flood flood(const std::vector<Bytes>& frames, std::chrono::milliseconds duration) {
    Flood f;
    const auto start = Clock::now();
    while (Clock::now() - start < duration && f.sent < 3'000'000) {
      f.rst += dp_.run(GetParam(), frames[f.sent % frames.size()]).verdict == Verdict::kTx;
      ++f.sent;
    }
    f.took_s = std::chrono::duration<double>(Clock::now() - start).count();
    return f;
  }
  // The budget of networks not tracked yet, back to its whole burst.
  void refill_new_networks() {
    const uint32_t zero = 0;
    const uint64_t long_ago = 1;
    ASSERT_EQ(bpf_map_update_elem(bpf_map__fd(dp_.skeleton()->maps.es_rst_reflect_new), &zero,
                                  &long_ago, BPF_ANY),
              0);
  }
  uint64_t capped() { return dp_.stats().cls[EDGESHED_CLASS_NORMAL][EDGESHED_CTR_RST_CAPPED]; }

  DataplaneFixture dp_;
};

// The case: 2,000 connections in 0.1 s from one /24 (a NAT, an
// office), with the defaults. Every one is refused by a RST, so none of
// the clients waits for a retransmission.
TEST_P(RstReflectTest, ABurstFromOneNetworkIsRefusedAtOnceWithTheDefaults) {
  shed_all_with_rst(defaults(), EDGESHED_DEFAULT_RST_PER_SEC_PER_CPU);
  std::vector<Bytes> frames;
  frames.reserve(2000);
  for (int i = 0; i < 2000; ++i) {
    frames.push_back(PacketBuilder::syn_v4(static_cast<uint16_t>(20000 + i), kNormalPort,
                                           "192.0.2." + std::to_string(1 + i % 250))
                         .build());
  }
  const auto start = Clock::now();
  int rst = 0;
  for (const auto& f : frames) rst += dp_.run(GetParam(), f).verdict == Verdict::kTx;
  const double took_s = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("2,000 SYNs from 192.0.2.0/24 in %.3f s: %d RSTs\n", took_s, rst);
  EXPECT_EQ(rst, 2000);
  EXPECT_EQ(capped(), 0u);
  EXPECT_EQ(global(EDGESHED_GCTR_RST_REFLECT_LIMITED), 0u);
}

// A sustained flood toward one network, from every address of it: once the
// burst is spent, it draws the rate and no more.
TEST_P(RstReflectTest, ASustainedFloodTowardOneNetworkDrawsAtMostTheRate) {
  constexpr uint32_t kRate = 1000, kBurst = 100;
  shed_all_with_rst({kRate, kBurst, 24, 48, {}});
  std::vector<Bytes> frames;
  frames.reserve(250);
  for (int i = 0; i < 250; ++i) {
    frames.push_back(PacketBuilder::syn_v4(static_cast<uint16_t>(30000 + i), kNormalPort,
                                           "198.51.100." + std::to_string(1 + i))
                         .build());
  }
  const auto [sent, rst, took_s] = flood(frames, std::chrono::milliseconds(1500));
  const double most = kBurst + kRate * (took_s + kJiffyS) + 1;
  std::printf("%llu SYNs toward 198.51.100.0/24 in %.3f s (%.0f/s): %llu RSTs, at most %.0f\n",
              static_cast<unsigned long long>(sent), took_s, sent / took_s,
              static_cast<unsigned long long>(rst), most);
  ASSERT_GT(sent, 10u * (kBurst + kRate * took_s)) << "no flood: the limit was never tested";
  EXPECT_LE(static_cast<double>(rst), most);
  // It keeps drawing the rate: a limit that stuck at zero would refuse the
  // network's real clients by silence.
  EXPECT_GE(static_cast<double>(rst), kBurst + 0.5 * kRate * took_s);
  EXPECT_EQ(global(EDGESHED_GCTR_RST_REFLECT_LIMITED), sent - rst);
  EXPECT_EQ(capped(), sent - rst);
}

// The due time is shared by every CPU: two CPUs flooding one network draw
// the rate once, not once each.
TEST_P(RstReflectTest, TwoCpusFloodingOneNetworkShareItsRate) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "one CPU";
  constexpr uint32_t kRate = 1000, kBurst = 50;
  shed_all_with_rst({kRate, kBurst, 24, 48, {}});
  const auto flood = flood_two_cpus(
      dp_, GetParam(), PacketBuilder::syn_v4(40000, kNormalPort, "203.0.113.9").build(),
      Verdict::kTx);
  expect_shared_rate(flood, kRate, kBurst, "RSTs toward 203.0.113.0/24");
}

// Each network has a limit of its own, cut at the configured prefix, and
// shares the limits of the aggregates that hold it (/16 and /8; IPv6 /32
// and /16): networks in different aggregates share nothing.
TEST_P(RstReflectTest, NetworksDoNotShareALimit) {
  shed_all_with_rst({1, 2, 24, 48, {}});  // two RSTs, then one a second
  EXPECT_EQ(syn_v4("192.0.2.1"), Verdict::kTx);
  EXPECT_EQ(syn_v4("192.0.2.200"), Verdict::kTx);
  EXPECT_EQ(syn_v4("192.0.2.7"), Verdict::kDrop);  // same /24: spent
  refill_new_networks();
  EXPECT_EQ(syn_v4("198.51.100.1"), Verdict::kTx);  // another /8
  refill_new_networks();
  EXPECT_EQ(syn_v6("2001:db8:1::1"), Verdict::kTx);
  EXPECT_EQ(syn_v6("2001:db8:1:ffff::2"), Verdict::kTx);
  EXPECT_EQ(syn_v6("2001:db8:1:1234::3"), Verdict::kDrop);  // same /48
  refill_new_networks();
  EXPECT_EQ(syn_v6("3fff::1"), Verdict::kTx);  // another /16
  EXPECT_EQ(global(EDGESHED_GCTR_RST_REFLECT_LIMITED), 2u);
  EXPECT_EQ(capped(), 2u);

  // A /16 makes 198.51.100.0/24 and 198.51.7.0/24 one network.
  auto cfg = dp_.config();
  cfg.rst_reflect.prefix4 = 16;
  dp_.set_config(cfg);
  refill_new_networks();
  EXPECT_EQ(syn_v4("198.51.7.7"), Verdict::kTx);
  EXPECT_EQ(syn_v4("198.51.100.9"), Verdict::kDrop);
}

// Networks of the configured size inside one aggregate share its limit:
// before, a victim holding a /16 got the limit 256 times, once per /24.
TEST_P(RstReflectTest, AVictimsLargerPrefixDoesNotMultiplyTheLimit) {
  constexpr uint32_t kRate = 1000, kBurst = 100;
  shed_all_with_rst({kRate, kBurst, 24, 48, {}});
  std::vector<Bytes> frames;
  frames.reserve(256);
  for (int i = 0; i < 256; ++i) {  // every /24 of 198.18.0.0/16
    frames.push_back(PacketBuilder::syn_v4(static_cast<uint16_t>(30000 + i), kNormalPort,
                                           "198.18." + std::to_string(i) + ".1")
                         .build());
  }
  const auto [sent, rst, took_s] = flood(frames, std::chrono::milliseconds(1000));
  const double most = kBurst + kRate * (took_s + kJiffyS) + 1;
  std::printf("%llu SYNs from the 256 /24s of 198.18.0.0/16 in %.3f s: %llu RSTs, at most %.0f\n",
              static_cast<unsigned long long>(sent), took_s, static_cast<unsigned long long>(rst),
              most);
  // Each /24 sent twice its burst: with a limit per /24 alone, at least
  // 256 bursts (25,600) would have been answered.
  ASSERT_GT(sent, 2u * (256 * kBurst)) << "no flood: the limit was never tested";
  EXPECT_LE(static_cast<double>(rst), most);
}

// Networks not tracked yet take their first RST from one shared budget of
// the same rate and burst: a flood from ever new networks draws that, not a
// fresh burst per network, while a network already tracked keeps its own.
TEST_P(RstReflectTest, NewNetworksShareOneBudgetForTheirFirstRst) {
  shed_all_with_rst({1, 3, 24, 48, {}});
  EXPECT_EQ(syn_v4("192.0.2.1"), Verdict::kTx);
  EXPECT_EQ(syn_v4("198.51.100.1"), Verdict::kTx);
  EXPECT_EQ(syn_v4("203.0.113.1"), Verdict::kTx);
  EXPECT_EQ(syn_v4("10.0.0.1"), Verdict::kDrop) << "a fourth new network: the budget is spent";
  EXPECT_EQ(syn_v4("10.0.1.1"), Verdict::kDrop);
  EXPECT_EQ(global(EDGESHED_GCTR_RST_REFLECT_LIMITED), 2u);
  EXPECT_EQ(syn_v4("192.0.2.9"), Verdict::kTx) << "a tracked network has its own burst";
}

// A flood from ever new networks cannot evict a victim's entry and earn it
// a fresh burst: the shared budget lets the LRU take in only so many new
// networks a second. (On Linux 6.18 the LRU kept a victim used in bursts
// even without the budget, 131,072 new networks between its bursts; this
// bounds it whatever the LRU does.)
TEST_P(RstReflectTest, NewNetworksCannotFlushAVictimsLimit) {
  constexpr uint32_t kRate = 100, kBurst = 1000;
  constexpr uint32_t kOthersPerRound = 2 * EDGESHED_RST_REFLECT_ENTRIES;
  constexpr int kRounds = 6;
  shed_all_with_rst({kRate, kBurst, 24, 48, {}});
  const Bytes victim = PacketBuilder::syn_v4(40000, kNormalPort, "192.0.2.1").build();
  auto other = PacketBuilder::syn_v4(40000, kNormalPort, "10.0.0.1").build();
  constexpr size_t kSrcAt = kIpv4At + kIpv4SrcAt;
  const auto start = Clock::now();
  uint64_t victim_rst = 0;
  uint32_t net = 0x0a000000u;
  // Each round: enough new networks to evict an entry not used meanwhile,
  // then the victim's burst.
  for (int round = 0; round < kRounds; ++round) {
    for (uint32_t n = 0; n < kOthersPerRound; ++n, net += 0x100) {
      for (size_t k = 0; k < 3; ++k) other[kSrcAt + k] = static_cast<uint8_t>(net >> (24 - 8 * k));
      other[kIpv4At + kIpv4ChecksumAt] = other[kIpv4At + kIpv4ChecksumAt + 1] = 0;
      const auto sum = ipv4_header_checksum(std::span(other).subspan(kIpv4At, kIpv4Len));
      other[kIpv4At + kIpv4ChecksumAt] = static_cast<uint8_t>(sum >> 8);
      other[kIpv4At + kIpv4ChecksumAt + 1] = static_cast<uint8_t>(sum);
      dp_.run(GetParam(), other);
    }
    for (uint32_t i = 0; i < kBurst; ++i) {
      victim_rst += dp_.run(GetParam(), victim).verdict == Verdict::kTx;
    }
  }
  const double took_s = std::chrono::duration<double>(Clock::now() - start).count();
  const double most = kBurst + kRate * (took_s + kJiffyS) + 1;
  std::printf(
      "victim 192.0.2.0/24, %d rounds of %u new networks then its burst, %.2f s: %llu "
      "RSTs, at most %.0f\n",
      kRounds, kOthersPerRound, took_s, static_cast<unsigned long long>(victim_rst), most);
  EXPECT_LE(static_cast<double>(victim_rst), most);
}

// A flood from random sources all over the IPv4 space: new networks share
// one budget (the defaults: a burst of 4,000, then 1,000 a second), whose
// burst exceeds the per-CPU ceiling of this test, so the ceiling is what
// holds in the first second; the LRU keeps its fixed size whatever the
// number of networks.
TEST_P(RstReflectTest, AFloodFromEveryAddressKeepsTheMapBoundedAndTheCeilingHolds) {
  constexpr uint32_t kCeiling = 3000;
  constexpr int kSyns = 60'000;
  shed_all_with_rst(defaults(), kCeiling);
  auto frame = PacketBuilder::syn_v4(40000, kNormalPort, "192.0.2.1").build();
  std::mt19937_64 rng(20261202);
  const auto start = Clock::now();
  uint64_t rst = 0;
  for (int i = 0; i < kSyns; ++i) {
    const uint64_t r = rng();
    for (size_t k = 0; k < 4; ++k)
      frame[kIpv4At + kIpv4SrcAt + k] = static_cast<uint8_t>(r >> (8 * k));
    frame[kIpv4At + kIpv4ChecksumAt] = frame[kIpv4At + kIpv4ChecksumAt + 1] = 0;
    const auto sum = ipv4_header_checksum(std::span(frame).subspan(kIpv4At, kIpv4Len));
    frame[kIpv4At + kIpv4ChecksumAt] = static_cast<uint8_t>(sum >> 8);
    frame[kIpv4At + kIpv4ChecksumAt + 1] = static_cast<uint8_t>(sum);
    rst += dp_.run(GetParam(), frame).verdict == Verdict::kTx;
  }
  const double took_s = std::chrono::duration<double>(Clock::now() - start).count();

  const int fd = bpf_map__fd(dp_.skeleton()->maps.es_rst_reflect);
  bpf_map_info info{};
  uint32_t len = sizeof(info);
  ASSERT_EQ(bpf_obj_get_info_by_fd(fd, &info, &len), 0);
  edgeshed_rst_reflect_key key{}, next{};
  uint64_t entries = 0;
  bool first = true;
  while (entries <= info.max_entries &&
         bpf_map_get_next_key(fd, first ? nullptr : &key, &next) == 0) {
    key = next;
    first = false;
    ++entries;
  }
  // The ceiling is per CPU and per one-second window: the run spans at most
  // ceil(took_s) + 1 of them, all on the fixture's one CPU.
  const double windows = std::ceil(took_s) + 1;
  std::printf(
      "%d SYNs from random sources in %.2f s: %llu RSTs (ceiling %u per second), "
      "%llu networks held of %u\n",
      kSyns, took_s, static_cast<unsigned long long>(rst), kCeiling,
      static_cast<unsigned long long>(entries), info.max_entries);
  EXPECT_EQ(info.max_entries, static_cast<uint32_t>(EDGESHED_RST_REFLECT_ENTRIES));
  EXPECT_LE(entries, info.max_entries);
  EXPECT_GT(entries, 0u);
  EXPECT_LE(static_cast<double>(rst), kCeiling * windows);
  EXPECT_GE(rst, kCeiling) << "the ceiling was never reached: the test floods too little";
}

INSTANTIATE_TEST_SUITE_P(Entries, RstReflectTest, ::testing::Values(Entry::kXdp, Entry::kTc),
                         entry_name);

}  // namespace
}  // namespace edgeshed::testing
