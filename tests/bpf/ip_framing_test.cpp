// A device whose packets start at the IP header (an IP tunnel after
// decapsulation, WireGuard, tun): a host that decapsulates sees the inner
// SYN only there (issue #38, point 7). The data plane loaded for such a
// device parses from the IP header and answers with a RST that starts at
// one; the inner SYN's own addresses are the RST's.
#include <gtest/gtest.h>

#include <netinet/in.h>

#include "bpf/dataplane_fixture.h"

namespace edgeshed::testing {
namespace {

constexpr size_t kEthernetHeader = 14;
constexpr uint16_t kEthertypeIpv4 = 0x0800;
constexpr uint16_t kEthertypeIpv6 = 0x86DD;

// The frame's packet, without its Ethernet header: what an IP device holds.
Bytes ip_packet(const Bytes& frame) { return Bytes(frame.begin() + kEthernetHeader, frame.end()); }

// parse_frame() reads Ethernet frames: an IP packet gets a header put back.
std::optional<ParsedFrame> parse_ip_packet(const Bytes& packet) {
  if (packet.empty()) return std::nullopt;
  const uint16_t ethertype = (packet[0] >> 4) == 6 ? kEthertypeIpv6 : kEthertypeIpv4;
  Bytes frame(kEthernetHeader, 0);
  frame[12] = static_cast<uint8_t>(ethertype >> 8);
  frame[13] = static_cast<uint8_t>(ethertype & 0xff);
  frame.insert(frame.end(), packet.begin(), packet.end());
  return parse_frame(frame);
}

class IpFramingTest : public ::testing::TestWithParam<Entry> {
 protected:
  void SetUp() override {
    dp_.set_action(EDGESHED_ACTION_RST);
    dp_.set_class_policy(EDGESHED_CLASS_NORMAL, kShedAll);
  }

  // The RST that refuses the packet's SYN, checked against it.
  void expect_refused_by_rst(const Bytes& frame) {
    const Bytes packet = ip_packet(frame);
    const auto syn = parse_frame(frame);
    ASSERT_TRUE(syn);
    auto r = dp_.run(GetParam(), packet);
    ASSERT_EQ(r.verdict, Verdict::kTx);
    const auto rst = parse_ip_packet(r.out);
    ASSERT_TRUE(rst) << "the RST is not an IP packet from its first byte";
    EXPECT_TRUE(rst->exact_length) << "the RST does not start at the packet's first byte";
    EXPECT_EQ(rst->family, syn->family);
    EXPECT_EQ(rst->src_ip, syn->dst_ip);
    EXPECT_EQ(rst->dst_ip, syn->src_ip);
    if (rst->family == AF_INET) {
      EXPECT_TRUE(rst->ipv4_checksum_ok);
    }
    ASSERT_TRUE(rst->has_tcp);
    EXPECT_EQ(rst->sport, syn->dport);
    EXPECT_EQ(rst->dport, syn->sport);
    EXPECT_EQ(rst->tcp_flags, kRst | kAck);
    EXPECT_EQ(rst->ack, syn->seq + 1);
    EXPECT_TRUE(rst->tcp_checksum_ok);
  }

  DataplaneFixture dp_{"", EDGESHED_FRAMING_IP};
};

TEST_P(IpFramingTest, AnIpv4SynIsRefusedByARstFromTheIpHeaderOn) {
  expect_refused_by_rst(PacketBuilder::syn_v4(40000, kNormalPort).build());
}

TEST_P(IpFramingTest, AnIpv6SynIsRefusedByARstFromTheIpHeaderOn) {
  expect_refused_by_rst(PacketBuilder::syn_v6(40000, kNormalPort).build());
}

// No Ethernet header, so no MAC to be another host's: every SYN is ours at
// layer 2 (whatever TC's test run took the first bytes for).
TEST_P(IpFramingTest, IsNeverRefusedForAnotherHostsMac) {
  const auto before = dp_.stats();
  expect_refused_by_rst(PacketBuilder::syn_v4(40000, kNormalPort).build());
  EXPECT_EQ(global_delta(dp_.stats(), before, EDGESHED_GCTR_RST_NOT_TO_HOST), 0u);
}

TEST_P(IpFramingTest, ShedByDropWhenTheActionIsDrop) {
  dp_.set_action(EDGESHED_ACTION_DROP);
  EXPECT_EQ(
      dp_.run(GetParam(), ip_packet(PacketBuilder::syn_v4(40000, kNormalPort).build())).verdict,
      Verdict::kDrop);
}

TEST_P(IpFramingTest, EstablishedSegmentsAndOtherPortsPassUntouched) {
  TcpSpec ack;
  ack.dport = kNormalPort;
  ack.flags = kAck;
  ack.payload = Bytes(100, 'x');
  const Bytes established =
      ip_packet(PacketBuilder().ipv4("192.0.2.1", "198.51.100.2").tcp(ack).build());
  auto r = dp_.run(GetParam(), established);
  EXPECT_EQ(r.verdict, Verdict::kPass);
  EXPECT_EQ(r.out, established);
  const Bytes other_port = ip_packet(PacketBuilder::syn_v4(40000, kUnprotectedPort).build());
  EXPECT_EQ(dp_.run(GetParam(), other_port).verdict, Verdict::kPass);
}

// The first nibble is the family: neither 4 nor 6 is nothing of ours, and
// a version whose header is cut short is unparsed, never decided.
TEST_P(IpFramingTest, APacketOfNoKnownVersionPassesAndACutHeaderIsUnparsed) {
  Bytes not_ip = ip_packet(PacketBuilder::syn_v4(40000, kNormalPort).build());
  not_ip[0] = 0x15;  // version 1
  EXPECT_EQ(dp_.run(GetParam(), not_ip).verdict, Verdict::kPass);

  Bytes cut = ip_packet(PacketBuilder::syn_v6(40000, kNormalPort).build());
  cut.resize(30);  // past TC's minimum, short of the 40-byte IPv6 header
  const auto before = dp_.stats();
  auto r = dp_.try_run(GetParam(), cut);
  ASSERT_TRUE(r) << "the kernel's test run refused a 30-byte packet";
  EXPECT_EQ(r->verdict, Verdict::kPass);
  EXPECT_EQ(global_delta(dp_.stats(), before, EDGESHED_GCTR_UNPARSED), 1u);
}

// TC only: attach refuses XDP on an IP device (generic XDP takes what it
// returns for an Ethernet frame).
INSTANTIATE_TEST_SUITE_P(Entries, IpFramingTest, ::testing::Values(Entry::kTc), entry_name);

}  // namespace
}  // namespace edgeshed::testing
