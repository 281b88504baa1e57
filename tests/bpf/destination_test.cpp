// Only this host's destinations are decided (issue #38, point 3): with the
// check on, a SYN, a QUIC Initial or a frame too deep to a protected port
// but to a destination outside the tries (the host's local routes and the
// operator's prefixes) is transit: passed untouched, counted as such, no
// token taken, never answered with a RST.
#include <gtest/gtest.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/dataplane_fixture.h"
#include "common/ip_prefix.h"
#include "dataplane/destinations.h"
#include "edgeshed.skel.h"

namespace edgeshed::testing {
namespace {

constexpr const char* kElsewhere = "198.51.100.99";  // a host behind this one

IpPrefix prefix(const char* text) { return parse_ip_prefix(text).value(); }

class DestinationTest : public ::testing::TestWithParam<Entry> {
 protected:
  void SetUp() override {
    for (uint32_t c = 0; c < EDGESHED_NUM_CLASSES; ++c) dp_.set_class_policy(c, kShedAll);
    auto tries = DestinationMaps::from_skeleton(dp_.skeleton());
    ASSERT_TRUE(tries) << tries.error().message;
    tries_.emplace(std::move(*tries));
  }

  // The tries hold exactly these, and the check is on.
  void ours(const std::vector<Destination>& destinations) {
    ASSERT_TRUE(apply_destinations(dp_.maps(), *tries_, destinations));
  }

  // Passed untouched as transit: only the transit counter moved.
  void expect_transit(const Bytes& frame, const char* what) {
    const auto before = dp_.stats();
    const auto r = dp_.run(GetParam(), frame);
    EXPECT_EQ(r.verdict, Verdict::kPass) << what;
    EXPECT_EQ(r.out, frame) << what << ": modified";
    const auto after = dp_.stats();
    EXPECT_EQ(global_delta(after, before, EDGESHED_GCTR_TRANSIT), 1u) << what;
    EXPECT_EQ(all_class_counters(after), all_class_counters(before)) << what;
  }

  DataplaneFixture dp_;
  std::optional<DestinationMaps> tries_;
};

TEST_P(DestinationTest, WithoutTheCheckEveryDestinationIsDecided) {
  EXPECT_EQ(dp_.run(GetParam(),
                    PacketBuilder::syn_v4(40000, kNormalPort, "192.0.2.1", kElsewhere).build())
                .verdict,
            Verdict::kDrop);
}

TEST_P(DestinationTest, ASynToAnotherHostIsTransit) {
  ours({{prefix("198.51.100.2/32"), EDGESHED_DST_LOCAL},
        {prefix("2001:db8::2/128"), EDGESHED_DST_LOCAL}});
  EXPECT_EQ(dp_.run(GetParam(), PacketBuilder::syn_v4().build()).verdict, Verdict::kDrop)
      << "to a local address: decided";
  expect_transit(PacketBuilder::syn_v4(40000, kNormalPort, "192.0.2.1", kElsewhere).build(), "v4");
  EXPECT_EQ(dp_.run(GetParam(), PacketBuilder::syn_v6().build()).verdict, Verdict::kDrop)
      << "v6 local";
  expect_transit(PacketBuilder::syn_v6(40000, kNormalPort, "2001:db8::1", "2001:db8::99").build(),
                 "v6");
}

TEST_P(DestinationTest, AConfiguredPrefixIsDecidedAndAnswered) {
  ours({{prefix("198.51.100.0/24"), EDGESHED_DST_CONFIGURED}});
  dp_.set_action(EDGESHED_ACTION_RST);
  EXPECT_EQ(dp_.run(GetParam(),
                    PacketBuilder::syn_v4(40000, kNormalPort, "192.0.2.1", kElsewhere).build())
                .verdict,
            Verdict::kTx)
      << "inside the prefix: refused by a RST";
  expect_transit(PacketBuilder::syn_v4(40000, kNormalPort, "192.0.2.1", "203.0.113.9").build(),
                 "outside it: never answered");
}

// A transit SYN must not spend the host's rate: the one token of the
// second goes to the SYN to this host.
TEST_P(DestinationTest, TransitTakesNoToken) {
  ours({{prefix("198.51.100.2/32"), EDGESHED_DST_LOCAL}});
  dp_.set_class_policy(EDGESHED_CLASS_NORMAL, {0, 0, 1, 1, 0, 0});
  const uint32_t normal = EDGESHED_CLASS_NORMAL;
  const uint64_t long_ago = 1;
  ASSERT_EQ(bpf_map_update_elem(bpf_map__fd(dp_.skeleton()->maps.es_buckets), &normal, &long_ago,
                                BPF_ANY),
            0);
  for (int i = 0; i < 3; ++i) {
    expect_transit(PacketBuilder::syn_v4(40000, kNormalPort, "192.0.2.1", kElsewhere).build(),
                   "transit");
  }
  EXPECT_EQ(dp_.run(GetParam(), PacketBuilder::syn_v4().build()).verdict, Verdict::kPass)
      << "the token is still there";
  EXPECT_EQ(dp_.run(GetParam(), PacketBuilder::syn_v4().build()).verdict, Verdict::kDrop);
}

TEST_P(DestinationTest, QuicAndTooDeepFramesToAnotherHostAreTransit) {
  ours({{prefix("198.51.100.2/32"), EDGESHED_DST_LOCAL}});
  ASSERT_TRUE(dp_.maps().set_ports(
      {{kNormalPort, EDGESHED_CLASS_NORMAL, EDGESHED_PORT_TCP | EDGESHED_PORT_QUIC}}));
  expect_transit(PacketBuilder()
                     .ipv4("192.0.2.1", kElsewhere)
                     .udp(50000, kNormalPort, quic_long_packet({}))
                     .build(),
                 "QUIC Initial");
  auto deep = PacketBuilder::syn_v6(40000, kNormalPort, "2001:db8::1", "2001:db8::99");
  for (int i = 0; i < 7; ++i) deep.ipv6_ext(IPPROTO_DSTOPTS, 8);
  expect_transit(deep.build(), "seven extension headers");
}

// Replacing the set writes the new entries before the stale ones go.
TEST_P(DestinationTest, ReplaceKeepsExactlyTheWantedSet) {
  const std::vector<Destination> first = {{prefix("198.51.100.2/32"), EDGESHED_DST_LOCAL},
                                          {prefix("192.0.2.0/24"), EDGESHED_DST_CONFIGURED}};
  ours(first);
  auto read = tries_->read();
  ASSERT_TRUE(read);
  EXPECT_EQ(read->size(), 2u);
  const std::vector<Destination> second = {{prefix("198.51.100.2/32"), EDGESHED_DST_LOCAL},
                                           {prefix("2001:db8::/32"), EDGESHED_DST_CONFIGURED}};
  ours(second);
  read = tries_->read();
  ASSERT_TRUE(read);
  ASSERT_EQ(read->size(), 2u);
  EXPECT_NE(std::find(read->begin(), read->end(), second[1]), read->end());
  EXPECT_EQ(std::find(read->begin(), read->end(), first[1]), read->end());
}

INSTANTIATE_TEST_SUITE_P(Entries, DestinationTest, ::testing::Values(Entry::kXdp, Entry::kTc),
                         entry_name);

}  // namespace
}  // namespace edgeshed::testing
