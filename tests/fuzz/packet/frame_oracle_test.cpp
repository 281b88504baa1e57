// The oracle on frames whose answer is known by construction, before it is
// trusted to judge the data plane. No kernel needed.
#include "fuzz/packet/frame_oracle.h"

#include <gtest/gtest.h>

#include "common/packet.h"

namespace edgeshed::testing {
namespace {

FrameKind kind(const Bytes& frame) { return classify_frame(frame).kind; }

Bytes tcp_v4(uint8_t flags, uint16_t dport = 80) {
  TcpSpec t;
  t.flags = flags;
  t.dport = dport;
  return PacketBuilder().ipv4("192.0.2.1", "198.51.100.2").tcp(t).build();
}

TEST(FrameOracle, ReadsTheFieldsOfASyn) {
  TcpSpec t;
  t.sport = 1234;
  t.dport = 443;
  t.seq = 0xdeadbeef;
  t.flags = kSyn | kPsh;
  t.options = syn_options();
  t.payload = Bytes(7, 'p');
  const auto v = classify_frame(
      PacketBuilder().vlan(0x8100, 1).ipv4("192.0.2.1", "198.51.100.2").tcp(t).build());
  ASSERT_EQ(v.kind, FrameKind::kNewConnection) << v.why;
  EXPECT_EQ(v.family, AF_INET);
  EXPECT_EQ(v.l3_offset, 18u);
  EXPECT_EQ(v.vlan_tags, 1u);
  EXPECT_EQ(v.src[0], 192);
  EXPECT_EQ(v.dst[3], 2);
  EXPECT_EQ(v.sport, 1234);
  EXPECT_EQ(v.dport, 443);
  EXPECT_EQ(v.seq, 0xdeadbeef);
  EXPECT_EQ(v.payload_len, 7u);

  const auto v6 = classify_frame(PacketBuilder::syn_v6(1, 2, "2001:db8::7").build());
  ASSERT_EQ(v6.kind, FrameKind::kNewConnection);
  EXPECT_EQ(v6.family, AF_INET6);
  EXPECT_EQ(v6.src[15], 7);
  EXPECT_EQ(v6.l3_offset, 14u);
}

TEST(FrameOracle, OnlySynWithoutAckRstOrFinIsANewConnection) {
  EXPECT_EQ(kind(tcp_v4(kSyn)), FrameKind::kNewConnection);
  EXPECT_EQ(kind(tcp_v4(kSyn | kFin)), FrameKind::kOther);          // a listener discards it
  EXPECT_EQ(kind(tcp_v4(kSyn | 0xc0)), FrameKind::kNewConnection);  // ECN setup
  EXPECT_EQ(kind(tcp_v4(kSyn | kAck)), FrameKind::kOther);
  EXPECT_EQ(kind(tcp_v4(kSyn | kRst)), FrameKind::kOther);
  EXPECT_EQ(kind(tcp_v4(kAck)), FrameKind::kOther);
  EXPECT_EQ(kind(tcp_v4(0)), FrameKind::kOther);
  // The data offset is only judged on a SYN.
  EXPECT_EQ(kind(PacketBuilder::syn_v4().tcp_doff_override(4).build()), FrameKind::kUnparsed);
  TcpSpec ack;
  ack.flags = kAck;
  EXPECT_EQ(
      kind(PacketBuilder().ipv4("192.0.2.1", "198.51.100.2").tcp(ack).tcp_doff_override(4).build()),
      FrameKind::kOther);
}

TEST(FrameOracle, LinkLayer) {
  EXPECT_EQ(kind(Bytes(13, 0)), FrameKind::kUnparsed);
  EXPECT_EQ(kind(PacketBuilder().raw_ethertype(0x88cc, {}).build()), FrameKind::kOther);
  EXPECT_EQ(kind(PacketBuilder::syn_v4().vlan(0x8100, 1).vlan(0x88a8, 2).build()),
            FrameKind::kNewConnection);
  EXPECT_EQ(kind(PacketBuilder::syn_v4().vlan(0x8100, 1).vlan(0x8100, 2).vlan(0x8100, 3).build()),
            FrameKind::kNewConnection);
  auto five = PacketBuilder::syn_v4();
  for (int i = 0; i < 5; ++i) five.vlan(0x8100, 0);
  const auto deep = classify_frame(five.build());
  EXPECT_EQ(deep.kind, FrameKind::kTooDeep);
  EXPECT_EQ(deep.family, 0);  // no IP header reached
  Bytes tag_cut = PacketBuilder().vlan(0x8100, 1).raw_ethertype(0x0800, {}).build();
  tag_cut.resize(16);
  EXPECT_EQ(kind(tag_cut), FrameKind::kUnparsed);
}

TEST(FrameOracle, Ipv4Lengths) {
  EXPECT_EQ(kind(PacketBuilder::syn_v4().ipv4_ihl_override(4).build()), FrameKind::kUnparsed);
  EXPECT_EQ(kind(PacketBuilder::syn_v4().ip_total_length_override(2000).build()),
            FrameKind::kUnparsed);
  EXPECT_EQ(kind(PacketBuilder::syn_v4().ip_total_length_override(19).build()),
            FrameKind::kUnparsed);
  EXPECT_EQ(kind(PacketBuilder::syn_v4().ipv4_options(Bytes(12, 1)).build()),
            FrameKind::kNewConnection);
  Bytes padded = PacketBuilder().ipv4("192.0.2.1", "198.51.100.2").tcp(TcpSpec{}).build();
  padded.resize(padded.size() + 6, 0xee);
  EXPECT_EQ(kind(padded), FrameKind::kNewConnection);
  EXPECT_EQ(classify_frame(padded).payload_len, 0u);
  // A TCP header cut by the total length is cut, whatever bytes follow it.
  Bytes cut = PacketBuilder::syn_v4().ip_total_length_override(20 + 19).build();
  EXPECT_EQ(kind(cut), FrameKind::kUnparsed);
}

TEST(FrameOracle, Fragments) {
  const auto first = classify_frame(PacketBuilder::syn_v4().ipv4_fragment(true, 0).build());
  EXPECT_EQ(first.kind, FrameKind::kNewConnection);
  EXPECT_TRUE(first.first_fragment);
  EXPECT_EQ(
      kind(PacketBuilder::syn_v4().ipv4_fragment(true, 0).ip_total_length_override(28).build()),
      FrameKind::kTooDeep);
  EXPECT_EQ(kind(PacketBuilder()
                     .ipv4("192.0.2.1", "198.51.100.2")
                     .ipv4_fragment(true, 0)
                     .udp(1, 2)
                     .build()),
            FrameKind::kFragment);
  EXPECT_EQ(kind(PacketBuilder::syn_v4().ipv4_fragment(false, 3).build()), FrameKind::kFragment);
  EXPECT_EQ(kind(PacketBuilder::syn_v4().ipv4_fragment(false, 0).build()),
            FrameKind::kNewConnection);
  EXPECT_EQ(kind(PacketBuilder::syn_v6().ipv6_fragment(0, true).build()),
            FrameKind::kNewConnection);
  EXPECT_EQ(kind(PacketBuilder::syn_v6().ipv6_fragment(9, false).build()), FrameKind::kFragment);
  EXPECT_EQ(kind(PacketBuilder::syn_v6().ipv6_fragment(0, false).build()),
            FrameKind::kNewConnection);
}

TEST(FrameOracle, Ipv4Checksum) {
  Bytes syn = PacketBuilder::syn_v4().ipv4_options(Bytes(4, 1)).build();
  EXPECT_EQ(kind(syn), FrameKind::kNewConnection);
  syn[14 + 10] ^= 0x40;
  EXPECT_EQ(kind(syn), FrameKind::kBadChecksum);
  TcpSpec ack;
  ack.flags = kAck;
  Bytes other = PacketBuilder().ipv4("192.0.2.1", "198.51.100.2").tcp(ack).build();
  other[14 + 10] ^= 0x40;
  EXPECT_EQ(kind(other), FrameKind::kOther);  // only a SYN's header is summed
}

TEST(FrameOracle, Ipv6ExtensionHeaders) {
  auto chain = [](int n, uint8_t type) {
    auto b = PacketBuilder::syn_v6();
    for (int i = 0; i < n; ++i) b.ipv6_ext(type, 8);
    return b;
  };
  EXPECT_EQ(kind(chain(6, IPPROTO_DSTOPTS).build()), FrameKind::kNewConnection);
  const auto seven = classify_frame(chain(7, IPPROTO_DSTOPTS).build());
  EXPECT_EQ(seven.kind, FrameKind::kTooDeep);
  EXPECT_EQ(seven.family, AF_INET6);
  EXPECT_EQ(seven.src[15], 1);
  EXPECT_EQ(kind(chain(1, 51).build()), FrameKind::kOther);  // AH is not walked
  Bytes six_then_udp = PacketBuilder()
                           .ipv6("2001:db8::1", "2001:db8::2")
                           .ipv6_ext(IPPROTO_HOPOPTS, 8)
                           .ipv6_ext(IPPROTO_DSTOPTS, 8)
                           .ipv6_ext(IPPROTO_DSTOPTS, 8)
                           .ipv6_ext(IPPROTO_DSTOPTS, 8)
                           .ipv6_ext(IPPROTO_DSTOPTS, 8)
                           .ipv6_ext(IPPROTO_DSTOPTS, 8)
                           .udp(1, 2)
                           .build();
  EXPECT_EQ(kind(six_then_udp), FrameKind::kOther);
  EXPECT_EQ(kind(PacketBuilder::syn_v6().ip_total_length_override(2000).build()),
            FrameKind::kUnparsed);
  // A zero payload length before Hop-by-Hop: the packet's own (Linux).
  EXPECT_EQ(kind(chain(1, IPPROTO_HOPOPTS).ip_total_length_override(0).build()),
            FrameKind::kNewConnection);
  EXPECT_EQ(kind(chain(1, IPPROTO_DSTOPTS).ip_total_length_override(0).build()),
            FrameKind::kUnparsed);
  // An extension header reaching past the payload length, padding after it.
  Bytes past = chain(1, IPPROTO_HOPOPTS).ip_total_length_override(4).build();
  EXPECT_EQ(kind(past), FrameKind::kUnparsed);
  // A fragment header past the payload length, in what is only padding.
  Bytes frag_in_padding = PacketBuilder::syn_v6()
                              .ipv6_ext(IPPROTO_DSTOPTS, 8)
                              .ipv6_fragment(0, true)
                              .ip_total_length_override(8)
                              .build();
  EXPECT_EQ(kind(frag_in_padding), FrameKind::kUnparsed);
}

}  // namespace
}  // namespace edgeshed::testing
