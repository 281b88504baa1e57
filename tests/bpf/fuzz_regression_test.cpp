// Frames on which the packet fuzzer (tests/fuzz/packet/) found the data plane
// and its oracle disagreeing, kept as plain tests once the data plane was
// fixed. Each runs under a shed-all policy with RST, so a frame mistaken for
// a new connection would come back as a RST.
#include <gtest/gtest.h>

#include "bpf/dataplane_fixture.h"

namespace edgeshed::testing {
namespace {

class FuzzRegressionTest : public ::testing::TestWithParam<Entry> {
 protected:
  void SetUp() override {
    dp_.set_action(EDGESHED_ACTION_RST);
    for (uint32_t c = 0; c < EDGESHED_NUM_CLASSES; ++c) {
      dp_.set_class_policy(c, kShedAll);
    }
  }

  // The frame passes untouched, moves no class counter and moves the
  // global counter `global` (or none when it is -1) by one.
  void expect_passes(const Bytes& frame, int global, const char* what) {
    auto before = dp_.stats();
    auto r = dp_.run(GetParam(), frame);
    auto after = dp_.stats();
    EXPECT_EQ(r.verdict, Verdict::kPass) << what;
    EXPECT_EQ(r.out, frame) << what;
    EXPECT_EQ(all_class_counters(after), all_class_counters(before)) << what;
    for (int g = 0; g < EDGESHED_NUM_GLOBAL_COUNTERS; ++g) {
      EXPECT_EQ(global_delta(after, before, g), g == global ? 1u : 0u) << what << ", counter " << g;
    }
  }

  DataplaneFixture dp_;
};

// A SYN with RST is no connection attempt: Linux's listener discards it, and
// RFC 9293 forbids answering a RST with a RST. It was shed, and answered.
TEST_P(FuzzRegressionTest, SynWithRstIsNotANewConnection) {
  for (uint8_t flags :
       {uint8_t(kSyn | kRst), uint8_t(kSyn | kRst | kFin), uint8_t(kSyn | kRst | kPsh)}) {
    TcpSpec t;
    t.flags = flags;
    expect_passes(PacketBuilder().ipv4("192.0.2.1", "198.51.100.2").tcp(t).build(), -1, "v4");
    expect_passes(PacketBuilder().ipv6("2001:db8::1", "2001:db8::2").tcp(t).build(), -1, "v6");
    // Not judged further, like any other segment that is not a SYN.
    expect_passes(
        PacketBuilder().ipv4("192.0.2.1", "198.51.100.2").tcp(t).tcp_doff_override(3).build(), -1,
        "v4, data offset 3");
  }
}

// A TCP header cut short by the IP length is unparsed, whatever bytes the
// frame carries after the IP packet. The flags were read from that padding,
// so the count depended on it: unparsed, or not counted at all.
TEST_P(FuzzRegressionTest, TcpHeaderCutByTheIpLengthIsUnparsed) {
  for (uint8_t flags : {kAck, uint8_t(kPsh | kAck), kFin, kSyn}) {
    TcpSpec t;
    t.flags = flags;
    t.ack = 1;
    // The whole header is in the frame, but the last byte is not in the IP packet.
    expect_passes(PacketBuilder()
                      .ipv4("192.0.2.1", "198.51.100.2")
                      .tcp(t)
                      .ip_total_length_override(20 + 19)
                      .build(),
                  EDGESHED_GCTR_UNPARSED, "v4");
    expect_passes(PacketBuilder()
                      .ipv6("2001:db8::1", "2001:db8::2")
                      .tcp(t)
                      .ip_total_length_override(19)
                      .build(),
                  EDGESHED_GCTR_UNPARSED, "v6");
  }
}

// An IPv6 fragment header that starts inside the payload length but ends
// past it is unparsed. Its flags were read from the padding, which made it
// a fragment when they happened to have MF or an offset.
TEST_P(FuzzRegressionTest, Ipv6FragmentHeaderPastThePayloadIsUnparsed) {
  for (uint16_t payload_len : {8, 9, 15}) {
    expect_passes(PacketBuilder::syn_v6()
                      .ipv6_ext(IPPROTO_DSTOPTS, 8)
                      .ipv6_fragment(0, true)
                      .ip_total_length_override(payload_len)
                      .build(),
                  EDGESHED_GCTR_UNPARSED, "fragment header cut by the payload length");
  }
}

INSTANTIATE_TEST_SUITE_P(Entries, FuzzRegressionTest, ::testing::Values(Entry::kXdp, Entry::kTc),
                         entry_name);

}  // namespace
}  // namespace edgeshed::testing
