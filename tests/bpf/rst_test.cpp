// The RST that refuses a SYN, checked byte by byte against an independent
// parser and checksum routines.
#include <gtest/gtest.h>

#include <algorithm>
#include <utility>

#include "bpf/dataplane_fixture.h"

namespace edgeshed::testing {
namespace {

class RstTest : public ::testing::TestWithParam<Entry> {
 protected:
  void SetUp() override {
    dp_.set_action(EDGESHED_ACTION_RST);
    dp_.set_class_policy(EDGESHED_CLASS_NORMAL, kShedAll);
  }

  // Runs the SYN, expects a RST back, returns it parsed.
  ParsedFrame refuse(const Bytes& syn) {
    auto r = dp_.run(GetParam(), syn);
    EXPECT_EQ(r.verdict, Verdict::kTx);
    auto parsed = parse_frame(r.out);
    EXPECT_TRUE(parsed.has_value());
    return parsed.value_or(ParsedFrame{});
  }

  // What every RST must be, whatever the SYN looked like.
  void expect_rst_for(const ParsedFrame& rst, const ParsedFrame& syn) {
    EXPECT_EQ(rst.src_mac, syn.dst_mac);
    EXPECT_EQ(rst.dst_mac, syn.src_mac);
    ASSERT_EQ(rst.vlans.size(), syn.vlans.size());
    for (size_t i = 0; i < syn.vlans.size(); ++i) {
      EXPECT_EQ(rst.vlans[i].tpid, syn.vlans[i].tpid);
      EXPECT_EQ(rst.vlans[i].vid, syn.vlans[i].vid);
    }
    EXPECT_EQ(rst.family, syn.family);
    EXPECT_EQ(rst.src_ip, syn.dst_ip);
    EXPECT_EQ(rst.dst_ip, syn.src_ip);
    EXPECT_EQ(rst.ttl, 64);
    EXPECT_TRUE(rst.exact_length) << "trailing bytes after the RST";
    if (rst.family == AF_INET) {
      EXPECT_EQ(rst.ihl, 5);
      EXPECT_EQ(rst.ip_total_length, 40);
      EXPECT_TRUE(rst.ipv4_options.empty());
      EXPECT_TRUE(rst.dont_fragment);
      EXPECT_TRUE(rst.ipv4_checksum_ok);
    } else {
      EXPECT_EQ(rst.ipv6_payload_length, 20);
      EXPECT_EQ(rst.ipv6_next_header, IPPROTO_TCP);
      EXPECT_TRUE(rst.ipv6_ext_types.empty());
    }
    EXPECT_FALSE(rst.is_fragment);
    ASSERT_TRUE(rst.has_tcp);
    EXPECT_EQ(rst.sport, syn.dport);
    EXPECT_EQ(rst.dport, syn.sport);
    EXPECT_EQ(rst.seq, 0u);
    uint32_t consumed =
        1 + static_cast<uint32_t>(syn.payload.size()) + ((syn.tcp_flags & kFin) ? 1 : 0);
    EXPECT_EQ(rst.ack, syn.seq + consumed);
    EXPECT_EQ(rst.tcp_flags, kRst | kAck);
    EXPECT_EQ(rst.doff, 5);
    EXPECT_EQ(rst.window, 0);
    EXPECT_EQ(rst.urgent, 0);
    EXPECT_TRUE(rst.tcp_options.empty());
    EXPECT_TRUE(rst.payload.empty());
    EXPECT_TRUE(rst.tcp_checksum_ok);
  }

  void check(const Bytes& syn_frame) {
    auto syn = parse_frame(syn_frame);
    ASSERT_TRUE(syn.has_value());
    expect_rst_for(refuse(syn_frame), *syn);
  }

  DataplaneFixture dp_;
};

TEST_P(RstTest, Ipv4) {
  TcpSpec t;
  t.seq = 0x11223344;
  t.options = syn_options();
  check(PacketBuilder().ipv4("192.0.2.1", "198.51.100.2").tcp(t).build());
}

TEST_P(RstTest, Ipv6) {
  TcpSpec t;
  t.seq = 0xfffffffe;  // the ack wraps
  t.options = syn_options();
  check(PacketBuilder().ipv6("2001:db8::1", "2001:db8::2").tcp(t).build());
}

TEST_P(RstTest, KeepsVlanTags) {
  check(PacketBuilder::syn_v4().vlan(0x88a8, 100).vlan(0x8100, 200).build());
  check(PacketBuilder::syn_v6().vlan(0x8100, 300).build());
}

TEST_P(RstTest, DropsIpv4OptionsAndIpv6ExtensionHeaders) {
  check(PacketBuilder::syn_v4().ipv4_options({0x94, 0x04, 0x00, 0x00}).build());  // router alert
  check(PacketBuilder::syn_v6().ipv6_ext(IPPROTO_HOPOPTS, 8).ipv6_ext(IPPROTO_DSTOPTS, 8).build());
}

TEST_P(RstTest, AcknowledgesPayload) {
  TcpSpec t;
  t.seq = 1000;
  t.options = syn_options();
  t.payload = Bytes(37, 'p');
  check(PacketBuilder().ipv4("192.0.2.1", "198.51.100.2").tcp(t).build());
  check(PacketBuilder().ipv6("2001:db8::1", "2001:db8::2").tcp(t).build());
}

// A listener discards a SYN+FIN: it passes untouched, under shed-all with
// RST, and neither spends a token nor counts as a decision.
TEST_P(RstTest, SynFinPassesWithoutDecision) {
  dp_.set_class_policy(EDGESHED_CLASS_NORMAL, {EDGESHED_FRAC_ONE, 0, 1, 1, 0, 0});
  TcpSpec t;
  t.flags = kSyn | kFin;
  for (const Bytes& frame : {PacketBuilder().ipv4("192.0.2.1", "198.51.100.2").tcp(t).build(),
                             PacketBuilder().ipv6("2001:db8::1", "2001:db8::2").tcp(t).build()}) {
    const auto before = dp_.stats();
    EXPECT_EQ(dp_.run(GetParam(), frame).verdict, Verdict::kPass);
    EXPECT_EQ(all_class_counters(dp_.stats()) - all_class_counters(before), 0u);
  }
}

TEST_P(RstTest, ChecksumsMatchTheIndependentRoutines) {
  // Many sources and sequence numbers: a checksum bug that only some carry
  // patterns expose would show here.
  for (int i = 0; i < 64; ++i) {
    TcpSpec t;
    t.sport = static_cast<uint16_t>(1024 + i * 977);
    t.seq = 0x9e3779b9u * static_cast<uint32_t>(i + 1);
    std::string v4 = "198.51.100." + std::to_string(i + 1);
    std::string v6 = "2001:db8::" + std::to_string(i * 131 + 7);
    check(PacketBuilder().ipv4(v4, "192.0.2.200").tcp(t).build());
    check(PacketBuilder().ipv6(v6, "2001:db8:ffff::1").tcp(t).build());
  }
}

TEST_P(RstTest, PaddedSynGivesAnExactRst) {
  Bytes frame = PacketBuilder().ipv4("192.0.2.1", "198.51.100.2").tcp(TcpSpec{}).build();
  frame.resize(60, 0);  // minimum Ethernet frame
  auto syn = parse_frame(frame);
  ASSERT_TRUE(syn.has_value());
  auto rst = refuse(frame);
  EXPECT_TRUE(rst.exact_length);
  expect_rst_for(rst, *syn);
}

// A RST answers from the SYN's destination to its sender: a group, broadcast
// or unspecified address on either side means a spoofed or misdirected SYN.
// It is shed by drop, counted, and never answered.
TEST_P(RstTest, NeverAnswersGroupOrUnspecifiedAddresses) {
  const Mac group_src = {0x01, 0x00, 0x5e, 0x00, 0x00, 0x01};
  const struct {
    const char* name;
    Bytes frame;
  } cases[] = {
      {"v4 multicast source", PacketBuilder::syn_v4(40000, 80, "224.0.0.1").build()},
      {"v4 multicast destination",
       PacketBuilder::syn_v4(40000, 80, "192.0.2.1", "239.1.2.3").build()},
      {"v4 broadcast source", PacketBuilder::syn_v4(40000, 80, "255.255.255.255").build()},
      {"v4 reserved source", PacketBuilder::syn_v4(40000, 80, "240.0.0.1").build()},
      {"v4 this-network source", PacketBuilder::syn_v4(40000, 80, "0.0.0.0").build()},
      {"v6 multicast source", PacketBuilder::syn_v6(40000, 80, "ff02::1").build()},
      {"v6 multicast destination",
       PacketBuilder::syn_v6(40000, 80, "2001:db8::1", "ff05::2").build()},
      {"v6 unspecified source", PacketBuilder::syn_v6(40000, 80, "::").build()},
      {"group source MAC", PacketBuilder::syn_v4().eth(group_src, kDefaultDstMac).build()},
  };
  uint64_t expected = 0;
  for (const auto& c : cases) {
    const auto before = dp_.stats();
    const auto r = dp_.run(GetParam(), c.frame);
    EXPECT_EQ(r.verdict, Verdict::kDrop) << c.name;
    const auto after = dp_.stats();
    EXPECT_EQ(global_delta(after, before, EDGESHED_GCTR_RST_NOT_UNICAST), 1u) << c.name;
    EXPECT_EQ(class_delta(after, before, EDGESHED_CLASS_NORMAL, EDGESHED_CTR_SHED_FRAC), 1u)
        << c.name;
    EXPECT_EQ(class_delta(after, before, EDGESHED_CLASS_NORMAL, EDGESHED_CTR_RST_SENT), 0u)
        << c.name;
    ++expected;
  }
  EXPECT_EQ(dp_.stats().global[EDGESHED_GCTR_RST_NOT_UNICAST], expected);
  // The same SYN from a unicast sender is answered.
  EXPECT_EQ(dp_.run(GetParam(), PacketBuilder::syn_v4().build()).verdict, Verdict::kTx);
}

// A RST answers only a frame sent to this host: XDP compares the destination
// MAC with the interface's, TC reads the kernel's pkt_type. Anything else
// (promiscuous mode, a bridge, a flooding switch) is shed by drop.
TEST_P(RstTest, NeverAnswersAFrameToAnotherHost) {
  const Mac other = {0x02, 0x00, 0x00, 0x00, 0x00, 0x99};
  const Mac broadcast = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  for (const auto& [mac, name] : {std::pair{other, "another host's MAC"},
                                  std::pair{broadcast, "broadcast MAC"}}) {
    const auto before = dp_.stats();
    const auto r = dp_.run(GetParam(), PacketBuilder::syn_v4().eth(kDefaultSrcMac, mac).build());
    EXPECT_EQ(r.verdict, Verdict::kDrop) << name;
    const auto after = dp_.stats();
    EXPECT_EQ(global_delta(after, before, EDGESHED_GCTR_RST_NOT_TO_HOST), 1u) << name;
    EXPECT_EQ(class_delta(after, before, EDGESHED_CLASS_NORMAL, EDGESHED_CTR_SHED_FRAC), 1u)
        << name;
    EXPECT_EQ(class_delta(after, before, EDGESHED_CLASS_NORMAL, EDGESHED_CTR_RST_SENT), 0u)
        << name;
  }
  if (GetParam() != Entry::kXdp) return;
  // At XDP the interface's own MAC is what counts, whatever it is.
  auto cfg = dp_.config();
  std::copy(other.begin(), other.end(), cfg.if_mac);
  dp_.set_config(cfg);
  EXPECT_EQ(dp_.run(GetParam(), PacketBuilder::syn_v4().eth(kDefaultSrcMac, other).build()).verdict,
            Verdict::kTx);
  EXPECT_EQ(dp_.run(GetParam(), PacketBuilder::syn_v4().build()).verdict, Verdict::kDrop);
}

INSTANTIATE_TEST_SUITE_P(Entries, RstTest, ::testing::Values(Entry::kXdp, Entry::kTc), entry_name);

}  // namespace
}  // namespace edgeshed::testing
