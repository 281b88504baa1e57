#include <gtest/gtest.h>

#include <string_view>

#include "common/packet.h"

namespace edgeshed::testing {
namespace {

Bytes from_hex(std::string_view hex) {
  Bytes out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<uint8_t>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

Bytes bytes_of(std::string_view text) { return Bytes(text.begin(), text.end()); }

// Wraps an IP packet from a capture in an untagged Ethernet header.
Bytes eth_frame(uint16_t ethertype, const Bytes& ip) {
  Bytes f(12, 0);
  f.push_back(static_cast<uint8_t>(ethertype >> 8));
  f.push_back(static_cast<uint8_t>(ethertype));
  f.insert(f.end(), ip.begin(), ip.end());
  return f;
}

// Real captures whose checksums were computed by the sending host's stack, so
// they do not depend on anything in this file.
// IPv4 SYN 192.168.0.101:59295 -> 192.30.252.154:80, TCP segment only.
constexpr std::string_view kSyn4Segment =
    "e79f00505eab226500000000b002ffff58230000020405b4010303050101080a3a4dbdc50000000004020000";
// IPv6 SYN 240e:379:26cb:4a04::58 -> 2001:4838:0:1b::201, whole IP packet.
constexpr std::string_view kSyn6Packet =
    "600488ff0028063f240e037926cb4a040000000000000058200148380000001b0000000000000201"
    "e5600050ab0db01400000000a002fbb8ca840000020405980402080afccc413b0000000001030307";
// IPv4 UDP 10.0.0.1:52716 -> 10.0.0.2:4000 "Hello\n", whole IP packet.
constexpr std::string_view kUdp4Packet =
    "450000225da140004011c9270a0000010a000002cdec0fa0000eea6648656c6c6f0a";

TEST(PacketChecksum, Rfc1071Ipv4HeaderExample) {
  Bytes header = from_hex("45000073000040004011b861c0a80001c0a800c7");
  EXPECT_EQ(ipv4_header_checksum(header), 0xb861);
  header[10] = header[11] = 0;  // the stored field must not matter
  EXPECT_EQ(ipv4_header_checksum(header), 0xb861);
}

TEST(PacketChecksum, TcpV4Capture) {
  const Bytes seg = from_hex(kSyn4Segment);
  const std::array<uint8_t, 4> src = {192, 168, 0, 101};
  const std::array<uint8_t, 4> dst = {192, 30, 252, 154};
  EXPECT_EQ(tcp_checksum_v4(src, dst, seg), 0x5823);
}

TEST(PacketChecksum, TcpV6Capture) {
  const Bytes ip = from_hex(kSyn6Packet);
  const std::span<const uint8_t> view(ip);
  EXPECT_EQ(tcp_checksum_v6(view.subspan<8, 16>(), view.subspan<24, 16>(), view.subspan(40)),
            0xca84);
}

TEST(PacketBuilder, ReproducesCapturedSegmentsByteForByte) {
  const Bytes v4 =
      PacketBuilder()
          .ipv4("192.168.0.101", "192.30.252.154")
          .tcp({.sport = 59295,
                .dport = 80,
                .seq = 0x5eab2265,
                .flags = kSyn,
                .window = 0xffff,
                .options = from_hex("020405b4010303050101080a3a4dbdc50000000004020000")})
          .build();
  EXPECT_EQ(Bytes(v4.begin() + 34, v4.end()), from_hex(kSyn4Segment));

  const Bytes v6 = PacketBuilder()
                       .ipv6("240e:379:26cb:4a04::58", "2001:4838:0:1b::201")
                       .ttl(63)
                       .tcp({.sport = 58720,
                             .dport = 80,
                             .seq = 0xab0db014,
                             .flags = kSyn,
                             .window = 0xfbb8,
                             .options = from_hex("020405980402080afccc413b0000000001030307")})
                       .build();
  // Only the flow label (not modelled) differs from the capture.
  const Bytes captured6 = from_hex(kSyn6Packet);
  EXPECT_EQ(Bytes(v6.begin() + 18, v6.end()), Bytes(captured6.begin() + 4, captured6.end()));

  const Bytes udp = PacketBuilder()
                        .ipv4("10.0.0.1", "10.0.0.2")
                        .ipv4_id(0x5da1)
                        .udp(52716, 4000, bytes_of("Hello\n"))
                        .build();
  EXPECT_EQ(Bytes(udp.begin() + 14, udp.end()), from_hex(kUdp4Packet));
}

TEST(PacketParse, CapturedFrames) {
  const auto v6 = parse_frame(eth_frame(0x86dd, from_hex(kSyn6Packet)));
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->family, AF_INET6);
  EXPECT_EQ(v6->src_ip, "240e:379:26cb:4a04::58");
  EXPECT_EQ(v6->dst_ip, "2001:4838:0:1b::201");
  EXPECT_EQ(v6->ttl, 63);
  EXPECT_EQ(v6->ipv6_payload_length, 40);
  EXPECT_TRUE(v6->has_tcp);
  EXPECT_TRUE(v6->tcp_checksum_ok);
  EXPECT_EQ(v6->l4_checksum, 0xca84);
  EXPECT_EQ(v6->sport, 58720);
  EXPECT_EQ(v6->seq, 0xab0db014u);
  EXPECT_EQ(v6->tcp_flags, kSyn);
  EXPECT_TRUE(v6->exact_length);

  const auto udp = parse_frame(eth_frame(0x0800, from_hex(kUdp4Packet)));
  ASSERT_TRUE(udp);
  EXPECT_TRUE(udp->ipv4_checksum_ok);
  EXPECT_TRUE(udp->has_udp);
  EXPECT_TRUE(udp->udp_checksum_ok);
  EXPECT_EQ(udp->dport, 4000);
  EXPECT_EQ(udp->payload, bytes_of("Hello\n"));
}

TEST(PacketBuilder, SynV4RoundTrip) {
  const Bytes frame = PacketBuilder::syn_v4(40000, 443).build();
  ASSERT_EQ(frame.size(), 14u + 20 + 40);
  const auto p = parse_frame(frame);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->src_mac, kDefaultSrcMac);
  EXPECT_EQ(p->dst_mac, kDefaultDstMac);
  EXPECT_TRUE(p->vlans.empty());
  EXPECT_EQ(p->ethertype, 0x0800);
  EXPECT_EQ(p->family, AF_INET);
  EXPECT_EQ(p->src_ip, "192.0.2.1");
  EXPECT_EQ(p->dst_ip, "198.51.100.2");
  EXPECT_EQ(p->ttl, 64);
  EXPECT_EQ(p->ihl, 5);
  EXPECT_EQ(p->ip_total_length, 60);
  EXPECT_TRUE(p->dont_fragment);
  EXPECT_FALSE(p->is_fragment);
  EXPECT_EQ(p->l4_proto, IPPROTO_TCP);
  EXPECT_TRUE(p->ipv4_checksum_ok);
  EXPECT_TRUE(p->tcp_checksum_ok);
  EXPECT_EQ(p->sport, 40000);
  EXPECT_EQ(p->dport, 443);
  EXPECT_EQ(p->seq, 0x11223344u);
  EXPECT_EQ(p->ack, 0u);
  EXPECT_EQ(p->tcp_flags, kSyn);
  EXPECT_EQ(p->doff, 10);
  EXPECT_EQ(p->window, 64240);
  EXPECT_EQ(p->tcp_options, syn_options());
  EXPECT_EQ(syn_options().size(), 20u);
  EXPECT_TRUE(p->payload.empty());
  EXPECT_TRUE(p->exact_length);
}

TEST(PacketBuilder, SynV6RoundTrip) {
  const Bytes frame = PacketBuilder::syn_v6().build();
  ASSERT_EQ(frame.size(), 14u + 40 + 40);
  const auto p = parse_frame(frame);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->ethertype, 0x86dd);
  EXPECT_EQ(p->family, AF_INET6);
  EXPECT_EQ(p->src_ip, "2001:db8::1");
  EXPECT_EQ(p->dst_ip, "2001:db8::2");
  EXPECT_EQ(p->ipv6_payload_length, 40);
  EXPECT_EQ(p->ipv6_next_header, IPPROTO_TCP);
  EXPECT_EQ(p->ttl, 64);
  EXPECT_TRUE(p->tcp_checksum_ok);
  EXPECT_EQ(p->dport, 80);
  EXPECT_EQ(p->tcp_flags, kSyn);
  EXPECT_TRUE(p->exact_length);
}

TEST(PacketBuilder, TwoVlanTagsOuterFirst) {
  const Mac src = {0xaa, 1, 2, 3, 4, 5};
  const Mac dst = {0xbb, 6, 7, 8, 9, 10};
  const Bytes frame =
      PacketBuilder::syn_v6().eth(src, dst).vlan(0x88a8, 100).vlan(0x8100, 200).build();
  EXPECT_EQ(frame[12], 0x88);
  EXPECT_EQ(frame[13], 0xa8);
  const auto p = parse_frame(frame);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->src_mac, src);
  EXPECT_EQ(p->dst_mac, dst);
  ASSERT_EQ(p->vlans.size(), 2u);
  EXPECT_EQ(p->vlans[0].tpid, 0x88a8);
  EXPECT_EQ(p->vlans[0].vid, 100);
  EXPECT_EQ(p->vlans[1].tpid, 0x8100);
  EXPECT_EQ(p->vlans[1].vid, 200);
  EXPECT_EQ(p->ethertype, 0x86dd);
  EXPECT_TRUE(p->tcp_checksum_ok);
  EXPECT_TRUE(p->exact_length);
}

TEST(PacketBuilder, Ipv4OptionsAndOddPayload) {
  const Bytes frame = PacketBuilder()
                          .ipv4("203.0.113.9", "198.51.100.7")
                          .ipv4_options({0x94, 0x04, 0x00, 0x00, 0x01})  // router alert, NOP
                          .tcp({.sport = 1234,
                                .dport = 8080,
                                .seq = 7,
                                .ack = 99,
                                .flags = kPsh | kAck,
                                .window = 512,
                                .urgent = 3,
                                .options = {0x01, 0x01, 0x08},
                                .payload = bytes_of("GET /")})
                          .build();
  const auto p = parse_frame(frame);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->ihl, 7);
  EXPECT_EQ(p->ipv4_options, (Bytes{0x94, 0x04, 0, 0, 0x01, 0, 0, 0}));
  EXPECT_EQ(p->ip_total_length, 28 + 24 + 5);
  EXPECT_TRUE(p->ipv4_checksum_ok);
  EXPECT_TRUE(p->tcp_checksum_ok);
  EXPECT_EQ(p->ack, 99u);
  EXPECT_EQ(p->tcp_flags, kPsh | kAck);
  EXPECT_EQ(p->urgent, 3);
  EXPECT_EQ(p->doff, 6);
  EXPECT_EQ(p->tcp_options, (Bytes{0x01, 0x01, 0x08, 0x00}));
  EXPECT_EQ(p->payload, bytes_of("GET /"));
  EXPECT_TRUE(p->exact_length);
}

TEST(PacketBuilder, Ipv6ExtensionChainUsesUpperLayerLength) {
  const Bytes frame = PacketBuilder::syn_v6()
                          .ipv6_ext(IPPROTO_HOPOPTS, 8)
                          .ipv6_ext(IPPROTO_ROUTING, 24)
                          .ipv6_ext(IPPROTO_DSTOPTS, 8)
                          .ipv6_fragment(0, true)
                          .build();
  const auto p = parse_frame(frame);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->ipv6_next_header, IPPROTO_HOPOPTS);
  EXPECT_EQ(p->ipv6_ext_types, (std::vector<uint8_t>{IPPROTO_HOPOPTS, IPPROTO_ROUTING,
                                                     IPPROTO_DSTOPTS, IPPROTO_FRAGMENT}));
  EXPECT_EQ(p->ipv6_payload_length, 8 + 24 + 8 + 8 + 40);
  EXPECT_EQ(p->l4_proto, IPPROTO_TCP);
  EXPECT_TRUE(p->is_fragment);
  EXPECT_TRUE(p->more_fragments);
  EXPECT_EQ(p->frag_offset, 0);
  EXPECT_TRUE(p->has_tcp);
  EXPECT_TRUE(p->tcp_checksum_ok);
  EXPECT_TRUE(p->exact_length);
  // The same segment without extension headers carries the same checksum.
  const auto plain = parse_frame(PacketBuilder::syn_v6().build());
  ASSERT_TRUE(plain);
  EXPECT_EQ(p->l4_checksum, plain->l4_checksum);
}

TEST(PacketBuilder, Fragments) {
  const auto first = parse_frame(PacketBuilder::syn_v4().ipv4_fragment(true, 0).build());
  ASSERT_TRUE(first);
  EXPECT_TRUE(first->is_fragment);
  EXPECT_TRUE(first->more_fragments);
  EXPECT_FALSE(first->dont_fragment);
  EXPECT_TRUE(first->has_tcp);

  const auto later = parse_frame(PacketBuilder::syn_v4().ipv4_fragment(false, 185).build());
  ASSERT_TRUE(later);
  EXPECT_TRUE(later->is_fragment);
  EXPECT_FALSE(later->more_fragments);
  EXPECT_EQ(later->frag_offset, 185);
  EXPECT_FALSE(later->has_tcp);
  EXPECT_TRUE(later->ipv4_checksum_ok);

  const auto later6 = parse_frame(PacketBuilder::syn_v6().ipv6_fragment(100, false).build());
  ASSERT_TRUE(later6);
  EXPECT_TRUE(later6->is_fragment);
  EXPECT_EQ(later6->frag_offset, 100);
  EXPECT_FALSE(later6->has_tcp);
}

TEST(PacketBuilder, UdpAndNonIpFrames) {
  for (bool v6 : {false, true}) {
    PacketBuilder b;
    if (v6) {
      b.ipv6("2001:db8::5", "2001:db8::6");
    } else {
      b.ipv4("192.0.2.5", "192.0.2.6");
    }
    const auto p = parse_frame(b.udp(5353, 53, bytes_of("odd")).build());
    ASSERT_TRUE(p);
    EXPECT_TRUE(p->has_udp);
    EXPECT_FALSE(p->has_tcp);
    EXPECT_TRUE(p->udp_checksum_ok) << "v6=" << v6;
    EXPECT_EQ(p->payload, bytes_of("odd"));
  }

  const Bytes arp = PacketBuilder().ipv4("192.0.2.1", "192.0.2.2").arp().build();
  EXPECT_EQ(arp.size(), 42u);
  const auto pa = parse_frame(arp);
  ASSERT_TRUE(pa);
  EXPECT_EQ(pa->ethertype, 0x0806);
  EXPECT_EQ(pa->family, AF_UNSPEC);

  const auto lldp =
      parse_frame(PacketBuilder().vlan(0x8100, 5).raw_ethertype(0x88cc, {1, 2}).build());
  ASSERT_TRUE(lldp);
  EXPECT_EQ(lldp->ethertype, 0x88cc);
  EXPECT_EQ(lldp->vlans.size(), 1u);
}

TEST(PacketParse, DetectsCorruptedChecksums) {
  Bytes v4 = PacketBuilder::syn_v4().build();
  v4[14 + 8] ^= 0x01;  // TTL: covered by the IPv4 header checksum only
  auto p = parse_frame(v4);
  ASSERT_TRUE(p);
  EXPECT_FALSE(p->ipv4_checksum_ok);
  EXPECT_TRUE(p->tcp_checksum_ok);

  v4 = PacketBuilder::syn_v4().build();
  v4[14 + 20 + 4] ^= 0x80;  // sequence number
  p = parse_frame(v4);
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->ipv4_checksum_ok);
  EXPECT_FALSE(p->tcp_checksum_ok);

  Bytes v6 = PacketBuilder::syn_v6().build();
  v6[14 + 8 + 15] ^= 0x01;  // source address: in the pseudo-header
  p = parse_frame(v6);
  ASSERT_TRUE(p);
  EXPECT_FALSE(p->tcp_checksum_ok);
}

TEST(PacketParse, RejectsEveryTruncation) {
  const Bytes frames[] = {PacketBuilder::syn_v4().vlan(0x8100, 1).build(),
                          PacketBuilder::syn_v6().ipv6_ext(IPPROTO_DSTOPTS, 16).build()};
  for (const Bytes& frame : frames) {
    ASSERT_TRUE(parse_frame(frame));
    for (size_t len = 0; len < frame.size(); ++len) {
      EXPECT_FALSE(parse_frame(std::span(frame).first(len))) << "length " << len;
    }
  }
}

TEST(PacketParse, TrailingBytesClearExactLength) {
  Bytes frame = PacketBuilder::syn_v4().build();
  frame.resize(frame.size() + 6, 0);  // Ethernet minimum-size padding
  const auto p = parse_frame(frame);
  ASSERT_TRUE(p);
  EXPECT_FALSE(p->exact_length);
  EXPECT_TRUE(p->tcp_checksum_ok);
  EXPECT_TRUE(p->payload.empty());
}

TEST(PacketBuilder, OverridesWriteWrongFields) {
  const Bytes long_v4 = PacketBuilder::syn_v4().ip_total_length_override(1000).build();
  EXPECT_EQ(long_v4[16] << 8 | long_v4[17], 1000);
  EXPECT_EQ(ipv4_header_checksum(std::span(long_v4).subspan(14, 20)),
            long_v4[24] << 8 | long_v4[25]);
  EXPECT_FALSE(parse_frame(long_v4));

  const Bytes long_v6 = PacketBuilder::syn_v6().ip_total_length_override(41).build();
  EXPECT_EQ(long_v6[18] << 8 | long_v6[19], 41);
  EXPECT_FALSE(parse_frame(long_v6));

  const Bytes ihl = PacketBuilder::syn_v4().ipv4_ihl_override(4).build();
  EXPECT_EQ(ihl[14], 0x44);
  EXPECT_FALSE(parse_frame(ihl));

  for (uint8_t doff : {4, 15}) {
    const Bytes frame = PacketBuilder::syn_v4().tcp_doff_override(doff).build();
    EXPECT_EQ(frame[14 + 20 + 12] >> 4, doff);
    EXPECT_FALSE(parse_frame(frame));
  }
}

}  // namespace
}  // namespace edgeshed::testing
