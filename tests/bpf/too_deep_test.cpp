// Frames too deep for the parser (a tiny first fragment, a sixth VLAN tag, a
// seventh IPv6 extension header) are decided as the SYN they may hide
// would be (issue #38, point 2): the class of the port the cut header
// shows, else normal; the source prefix's class over it; its cap, fraction
// and rate, whose token it takes; the fraction drawn on what was parsed.
#include <gtest/gtest.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/dataplane_fixture.h"
#include "common/ip_prefix.h"
#include "edgeshed.skel.h"

namespace edgeshed::testing {
namespace {

constexpr uint16_t kQ = 0x8100;
constexpr uint16_t kIpv4Header = 20;
constexpr uint16_t kTinyTcp = 8;  // ports, sequence number: no flags
constexpr uint16_t kUnprotectedPort = 9999;
constexpr edgeshed_class_policy kAdmitAll = {};

// A SYN in a first fragment that ends 8 bytes into the TCP header.
Bytes tiny_fragment(uint16_t dport, const std::string& src = "192.0.2.1") {
  TcpSpec syn;
  syn.dport = dport;
  return PacketBuilder()
      .ipv4(src, "198.51.100.2")
      .ipv4_fragment(true, 0)
      .tcp(syn)
      .ip_total_length_override(kIpv4Header + kTinyTcp)
      .build();
}

// Six VLAN tags before the IP header: too deep, the sender known by its MAC.
Bytes vlan_deep(const Mac& src) {
  auto b = PacketBuilder::syn_v4().eth(src, kDefaultDstMac);
  for (int i = 0; i < 6; ++i) b.vlan(kQ, 0);
  return b.build();
}

Bytes ext_deep() {
  auto b = PacketBuilder::syn_v6();
  for (int i = 0; i < 7; ++i) b.ipv6_ext(IPPROTO_DSTOPTS, 8);
  return b.build();
}

class TooDeepTest : public ::testing::TestWithParam<Entry> {
 protected:
  void SetUp() override {
    for (uint32_t c = 0; c < EDGESHED_NUM_CLASSES; ++c) dp_.set_class_policy(c, kAdmitAll);
  }

  // The verdict, and that the frame was counted as too deep (shed or not),
  // never in a class's SYN counters.
  Verdict run(const Bytes& frame) {
    auto before = dp_.stats();
    auto verdict = dp_.run(GetParam(), frame).verdict;
    auto after = dp_.stats();
    EXPECT_EQ(global_delta(after, before, EDGESHED_GCTR_SHED_TOO_DEEP) +
                  global_delta(after, before, EDGESHED_GCTR_TOO_DEEP),
              1u);
    EXPECT_EQ(global_delta(after, before, EDGESHED_GCTR_SHED_TOO_DEEP),
              verdict == Verdict::kDrop ? 1u : 0u);
    EXPECT_EQ(all_class_counters(after), all_class_counters(before));
    return verdict;
  }

  // An idle class's due time: its whole burst.
  void refill_bucket(uint32_t class_id) {
    const uint64_t long_ago = 1;  // the monotonic clock's first nanosecond
    ASSERT_EQ(bpf_map_update_elem(bpf_map__fd(dp_.skeleton()->maps.es_buckets), &class_id,
                                  &long_ago, BPF_ANY),
              0);
  }

  DataplaneFixture dp_;
};

// Before: the normal class decided every too-deep frame, whatever its port.
TEST_P(TooDeepTest, ATinyFragmentIsDecidedByItsPortsClass) {
  dp_.set_class_policy(EDGESHED_CLASS_BACKGROUND, kShedAll);
  EXPECT_EQ(run(tiny_fragment(kBackgroundPort)), Verdict::kDrop) << "background sheds";
  EXPECT_EQ(run(tiny_fragment(kNormalPort)), Verdict::kPass) << "normal admits";
  EXPECT_EQ(run(tiny_fragment(kCriticalPort)), Verdict::kPass) << "critical admits";

  dp_.set_class_policy(EDGESHED_CLASS_NORMAL, kShedAll);
  EXPECT_EQ(run(tiny_fragment(kCriticalPort)), Verdict::kPass) << "critical admits still";
  EXPECT_EQ(run(tiny_fragment(kNormalPort)), Verdict::kDrop) << "normal sheds";
}

TEST_P(TooDeepTest, ATinyFragmentToAPortNotProtectedPasses) {
  for (uint32_t c = 0; c < EDGESHED_NUM_CLASSES; ++c) dp_.set_class_policy(c, kShedAll);
  EXPECT_EQ(run(tiny_fragment(kUnprotectedPort)), Verdict::kPass);
  EXPECT_EQ(run(tiny_fragment(kNormalPort)), Verdict::kDrop) << "the same to a protected port";
}

// The source prefix's class overrides the port's, as for a SYN.
TEST_P(TooDeepTest, ATinyFragmentTakesItsSourcePrefixClass) {
  ASSERT_TRUE(
      dp_.maps().set_prefix(parse_ip_prefix("203.0.113.0/24").value(), EDGESHED_CLASS_CRITICAL));
  dp_.set_class_policy(EDGESHED_CLASS_NORMAL, kShedAll);
  EXPECT_EQ(run(tiny_fragment(kNormalPort, "203.0.113.7")), Verdict::kPass);
  EXPECT_EQ(run(tiny_fragment(kNormalPort, "192.0.2.7")), Verdict::kDrop);
}

// Before: a rate-only policy never shed a too-deep frame, so it carried
// SYNs past the rate; now it takes a token, as the SYN would.
TEST_P(TooDeepTest, ATooDeepFrameTakesATokenOfItsClassRate) {
  constexpr edgeshed_class_policy kOnePerSecond = {0, 0, 1, 1, 0, 0};
  for (const auto& [frame, what] : {std::pair(tiny_fragment(kNormalPort), "tiny fragment"),
                                    std::pair(ext_deep(), "seven extension headers"),
                                    std::pair(vlan_deep(kDefaultSrcMac), "six VLAN tags")}) {
    dp_.set_class_policy(EDGESHED_CLASS_NORMAL, kOnePerSecond);
    refill_bucket(EDGESHED_CLASS_NORMAL);
    EXPECT_EQ(run(frame), Verdict::kPass) << what << ": the one token";
    EXPECT_EQ(run(frame), Verdict::kDrop) << what << ": none left";
    EXPECT_EQ(dp_.run(GetParam(), PacketBuilder::syn_v4().build()).verdict, Verdict::kDrop)
        << what << ": the SYN after it finds no token either";
  }
}

// Before: a frame too deep to reach its IP header was drawn as source 0,
// so a fraction shed all such frames or none. Now its source MAC draws.
TEST_P(TooDeepTest, AVlanDeepFrameIsDrawnOnItsSourceMac) {
  constexpr int kSenders = 64;
  dp_.set_class_policy(EDGESHED_CLASS_NORMAL, {EDGESHED_FRAC_ONE / 2, 0, 0, 0, 0, 0});
  int dropped = 0;
  for (int i = 0; i < kSenders; ++i) {
    const Mac src = {0x02, 0x00, 0x00, 0x00, static_cast<uint8_t>(i >> 8), static_cast<uint8_t>(i)};
    const auto first = run(vlan_deep(src));
    EXPECT_EQ(run(vlan_deep(src)), first) << "one sender, one draw";
    dropped += first == Verdict::kDrop;
  }
  EXPECT_GT(dropped, kSenders / 4) << "half of the senders are shed";
  EXPECT_LT(dropped, kSenders * 3 / 4) << "half of the senders are shed";
}

INSTANTIATE_TEST_SUITE_P(Entries, TooDeepTest, ::testing::Values(Entry::kXdp, Entry::kTc),
                         entry_name);

}  // namespace
}  // namespace edgeshed::testing
