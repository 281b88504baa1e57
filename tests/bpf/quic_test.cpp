// New QUIC connections on crafted frames: which UDP datagrams are decided
// (long-header Initials of v1 and v2 to a port protected for QUIC), and
// which pass untouched (every other packet type, short headers, other
// versions, other ports). Port 80 is protected for TCP and QUIC, 443 for TCP
// only; every class sheds everything unless a test says otherwise.
#include <gtest/gtest.h>

#include "bpf/dataplane_fixture.h"

namespace edgeshed::testing {
namespace {

constexpr uint16_t kQ = 0x8100;
constexpr uint16_t kClientPort = 50000;
constexpr uint64_t kSecond = 1'000'000'000;

Bytes initial_v4(const QuicLongSpec& q = {}, uint16_t dport = kNormalPort) {
  return PacketBuilder()
      .ipv4("192.0.2.1", "198.51.100.2")
      .udp(kClientPort, dport, quic_long_packet(q))
      .build();
}

Bytes initial_v6(const QuicLongSpec& q = {}) {
  return PacketBuilder()
      .ipv6("2001:db8::1", "2001:db8::2")
      .udp(kClientPort, kNormalPort, quic_long_packet(q))
      .build();
}

class QuicTest : public ::testing::TestWithParam<Entry> {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dp_.maps().set_ports(
        {{kNormalPort, EDGESHED_CLASS_NORMAL, EDGESHED_PORT_TCP | EDGESHED_PORT_QUIC},
         {kCriticalPort, EDGESHED_CLASS_CRITICAL}}));
    shed_all();
  }

  void shed_all() const {
    for (uint32_t c = 0; c < EDGESHED_NUM_CLASSES; ++c) {
      dp_.set_class_policy(c, kShedAll);
    }
  }

  // The frame is a new QUIC connection of the normal class, shed by the
  // fraction: dropped, and counted in QUIC's row alone.
  void expect_shed(const Bytes& frame, const std::string& what) const {
    const auto before = dp_.stats();
    EXPECT_EQ(dp_.run(GetParam(), frame).verdict, Verdict::kDrop) << what;
    const auto after = dp_.stats();
    EXPECT_EQ(quic_delta(after, before, EDGESHED_CLASS_NORMAL, EDGESHED_CTR_SHED_FRAC), 1u) << what;
    EXPECT_EQ(all_class_counters(after) - all_class_counters(before), 1u) << what;
  }

  // The frame passes without a decision; only `global` (if any) moves.
  void expect_untouched(const Bytes& frame, const std::string& what, int global = -1) const {
    const auto before = dp_.stats();
    EXPECT_EQ(dp_.run(GetParam(), frame).verdict, Verdict::kPass) << what;
    const auto after = dp_.stats();
    EXPECT_EQ(all_class_counters(after), all_class_counters(before)) << what;
    for (int g = 0; g < EDGESHED_NUM_GLOBAL_COUNTERS; ++g) {
      EXPECT_EQ(global_delta(after, before, g), g == global ? 1u : 0u) << what << ", counter " << g;
    }
  }

  DataplaneFixture dp_;
};

TEST_P(QuicTest, InitialsOfBothVersionsAreDecided) {
  for (uint32_t version : {kQuicV1, kQuicV2}) {
    const std::string v = version == kQuicV1 ? "v1" : "v2";
    expect_shed(initial_v4({.version = version}), v + " over IPv4");
    expect_shed(initial_v6({.version = version}), v + " over IPv6");
    expect_shed(PacketBuilder()
                    .vlan(kQ, 10)
                    .ipv4("192.0.2.1", "198.51.100.2")
                    .udp(kClientPort, kNormalPort, quic_long_packet({.version = version}))
                    .build(),
                v + " behind a VLAN tag");
    expect_shed(initial_v4({.version = version, .dcid = {}, .scid = {}}), v + ", empty CIDs");
    expect_shed(initial_v4({.version = version, .dcid = Bytes(20, 1), .scid = Bytes(20, 2)}),
                v + ", 20-byte CIDs");
  }
}

TEST_P(QuicTest, EveryOtherPacketOfAConnectionPasses) {
  for (uint32_t version : {kQuicV1, kQuicV2}) {
    for (QuicType type : {QuicType::kZeroRtt, QuicType::kHandshake, QuicType::kRetry}) {
      expect_untouched(initial_v4({.version = version, .type = type}),
                       "version " + std::to_string(version) + ", type " +
                           std::to_string(static_cast<int>(type)));
    }
    // v2's Initial type bits are v1's 0-RTT and the other way round.
    QuicLongSpec swapped{.version = version};
    Bytes frame = PacketBuilder()
                      .ipv4("192.0.2.1", "198.51.100.2")
                      .udp(kClientPort, kNormalPort,
                           [&] {
                             Bytes b = quic_long_packet(swapped);
                             b[0] ^= 0x10;  // the other version's Initial bits
                             return b;
                           }())
                      .build();
    expect_untouched(frame, "the other version's Initial type");
  }
  expect_untouched(initial_v4({.version = 0}), "Version Negotiation");
  expect_untouched(initial_v4({.version = 0xff00001d}), "draft-29");
  expect_untouched(initial_v4({.version = 0x1a2a3a4a}), "a greased version");
  expect_untouched(PacketBuilder()
                       .ipv4("192.0.2.1", "198.51.100.2")
                       .udp(kClientPort, kNormalPort, quic_short_packet(1200))
                       .build(),
                   "short header (1-RTT)");
  expect_untouched(PacketBuilder()
                       .ipv6("2001:db8::1", "2001:db8::2")
                       .udp(kClientPort, kNormalPort, quic_short_packet(60))
                       .build(),
                   "short header over IPv6");
}

TEST_P(QuicTest, InitialsToOtherPortsPass) {
  expect_untouched(initial_v4({}, kCriticalPort), "a port protected for TCP only");
  expect_untouched(initial_v4({}, kUnprotectedPort), "an unprotected port");
}

TEST_P(QuicTest, UndersizedInitialIsDroppedInEnforceModeOnly) {
  auto before = dp_.stats();
  EXPECT_EQ(dp_.run(GetParam(), initial_v4({.size = 1199})).verdict, Verdict::kDrop);
  auto after = dp_.stats();
  EXPECT_EQ(global_delta(after, before, EDGESHED_GCTR_QUIC_UNDERSIZED), 1u);
  EXPECT_EQ(all_class_counters(after), all_class_counters(before));
  expect_shed(initial_v4({.size = 1200}), "1,200 bytes, the minimum");

  edgeshed_config cfg = dp_.config();
  cfg.mode = EDGESHED_MODE_OBSERVE;
  dp_.set_config(cfg);
  expect_untouched(initial_v4({.size = 1199}), "observe mode", EDGESHED_GCTR_QUIC_UNDERSIZED);
}

// Fail open: a silent controller or mode off pass every Initial, even one
// the server will discard.
TEST_P(QuicTest, UndersizedInitialPassesWhileTheDataPlaneFailsOpen) {
  edgeshed_config cfg = dp_.config();
  cfg.heartbeat_timeout_ns = kSecond;
  dp_.set_config(cfg);
  dp_.set_heartbeat(monotonic_ns() - 5 * kSecond);
  auto before = dp_.stats();
  EXPECT_EQ(dp_.run(GetParam(), initial_v4({.size = 1199})).verdict, Verdict::kPass);
  auto after = dp_.stats();
  EXPECT_EQ(quic_delta(after, before, EDGESHED_CLASS_NORMAL, EDGESHED_CTR_FAIL_OPEN), 1u);
  EXPECT_EQ(global_delta(after, before, EDGESHED_GCTR_QUIC_UNDERSIZED), 0u);

  cfg.mode = EDGESHED_MODE_OFF;
  dp_.set_config(cfg);
  before = dp_.stats();
  EXPECT_EQ(dp_.run(GetParam(), initial_v4({.size = 1199})).verdict, Verdict::kPass);
  after = dp_.stats();
  EXPECT_EQ(quic_delta(after, before, EDGESHED_CLASS_NORMAL, EDGESHED_CTR_PASS_MODE_OFF), 1u);
  EXPECT_EQ(global_delta(after, before, EDGESHED_GCTR_QUIC_UNDERSIZED), 0u);
}

TEST_P(QuicTest, ConnectionIdsOver20BytesAreUnparsed) {
  expect_untouched(initial_v4({.dcid = Bytes(21, 1)}), "DCID of 21", EDGESHED_GCTR_UNPARSED);
  expect_untouched(initial_v4({.scid = Bytes(21, 2)}), "SCID of 21", EDGESHED_GCTR_UNPARSED);
}

// A frame cut anywhere, its lengths still those of the whole: never decided,
// never dropped. The same datagram made whole at every smaller size: never
// decided, and dropped only as an undersized Initial once its header fits.
TEST_P(QuicTest, TruncatedAtEveryOffsetIsNeverDecided) {
  const Bytes whole = initial_v4();
  const size_t header_end = 14 + 20 + 8 + 1 + 4 + 1 + 8 + 1 + 8;
  for (size_t len = 14 + 20; len < header_end + 8; ++len) {
    const Bytes cut(whole.begin(), whole.begin() + static_cast<long>(len));
    const auto before = dp_.stats();
    auto r = dp_.try_run(GetParam(), cut);
    if (!r) continue;  // the tc harness refuses an IP header it cannot read
    EXPECT_EQ(r->verdict, Verdict::kPass) << "cut at " << len;
    EXPECT_EQ(all_class_counters(dp_.stats()), all_class_counters(before)) << "cut at " << len;
  }
  for (size_t size = 0; size <= 1 + 4 + 1 + 8 + 1 + 8 + 4; ++size) {
    Bytes payload = quic_long_packet({});
    payload.resize(size);
    const Bytes frame = PacketBuilder()
                            .ipv4("192.0.2.1", "198.51.100.2")
                            .udp(kClientPort, kNormalPort, payload)
                            .build();
    const auto before = dp_.stats();
    const auto r = dp_.run(GetParam(), frame);
    const auto after = dp_.stats();
    EXPECT_EQ(all_class_counters(after), all_class_counters(before)) << "size " << size;
    const bool header_fits = size >= 1 + 4 + 1 + 8 + 1 + 8;
    EXPECT_EQ(r.verdict, header_fits ? Verdict::kDrop : Verdict::kPass) << "size " << size;
    EXPECT_EQ(global_delta(after, before, EDGESHED_GCTR_QUIC_UNDERSIZED), header_fits ? 1u : 0u)
        << "size " << size;
  }
}

TEST_P(QuicTest, AdmittedWhenThePolicyAdmitsAndNoInFlightCapApplies) {
  dp_.set_class_policy(EDGESHED_CLASS_NORMAL, {0, 1, 0, 0, 0, 0});
  dp_.set_inflight(EDGESHED_CLASS_NORMAL, 1);
  auto before = dp_.stats();
  EXPECT_EQ(dp_.run(GetParam(), PacketBuilder::syn_v4().build()).verdict, Verdict::kDrop);
  EXPECT_EQ(dp_.run(GetParam(), initial_v4()).verdict, Verdict::kPass);
  auto after = dp_.stats();
  EXPECT_EQ(class_delta(after, before, EDGESHED_CLASS_NORMAL, EDGESHED_CTR_SHED_CAP), 1u);
  EXPECT_EQ(quic_delta(after, before, EDGESHED_CLASS_NORMAL, EDGESHED_CTR_ADMITTED), 1u);
  EXPECT_EQ(quic_delta(after, before, EDGESHED_CLASS_NORMAL, EDGESHED_CTR_SHED_CAP), 0u);
}

TEST_P(QuicTest, ShedByTheClassRateWhenItsTokensAreSpent) {
  dp_.set_class_policy(EDGESHED_CLASS_NORMAL, {0, 0, 1, 1, 0, 0});
  auto before = dp_.stats();
  EXPECT_EQ(dp_.run(GetParam(), initial_v4()).verdict, Verdict::kPass);
  EXPECT_EQ(dp_.run(GetParam(), initial_v4()).verdict, Verdict::kDrop);
  auto after = dp_.stats();
  EXPECT_EQ(quic_delta(after, before, EDGESHED_CLASS_NORMAL, EDGESHED_CTR_ADMITTED), 1u);
  EXPECT_EQ(quic_delta(after, before, EDGESHED_CLASS_NORMAL, EDGESHED_CTR_SHED_RATE), 1u);
}

TEST_P(QuicTest, ObserveModeCountsAndPasses) {
  edgeshed_config cfg = dp_.config();
  cfg.mode = EDGESHED_MODE_OBSERVE;
  dp_.set_config(cfg);
  auto before = dp_.stats();
  EXPECT_EQ(dp_.run(GetParam(), initial_v6()).verdict, Verdict::kPass);
  EXPECT_EQ(quic_delta(dp_.stats(), before, EDGESHED_CLASS_NORMAL, EDGESHED_CTR_WOULD_SHED_FRAC),
            1u);
}

// A first fragment holding the whole Initial header: Linux reassembles the
// datagram, so it is decided, and dropped it never can be.
TEST_P(QuicTest, InitialInAFirstFragmentIsDecided) {
  const Bytes frame = PacketBuilder()
                          .ipv4("192.0.2.1", "198.51.100.2")
                          .ipv4_fragment(true, 0)
                          .udp(kClientPort, kNormalPort, quic_long_packet({}))
                          .ip_total_length_override(20 + 8 + 600)
                          .build();
  const auto before = dp_.stats();
  EXPECT_EQ(dp_.run(GetParam(), Bytes(frame.begin(), frame.begin() + 14 + 20 + 8 + 600)).verdict,
            Verdict::kDrop);
  const auto after = dp_.stats();
  EXPECT_EQ(quic_delta(after, before, EDGESHED_CLASS_NORMAL, EDGESHED_CTR_SHED_FRAC), 1u);
  EXPECT_EQ(global_delta(after, before, EDGESHED_GCTR_SHED_FRAGMENT), 1u);
}

INSTANTIATE_TEST_SUITE_P(Entries, QuicTest, ::testing::Values(Entry::kXdp, Entry::kTc), entry_name);

}  // namespace
}  // namespace edgeshed::testing
