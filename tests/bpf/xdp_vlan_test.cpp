// A NIC that strips VLAN tags (rx-vlan-offload) hides them from native XDP
// (issue #38, point 5). The program bound to the device reads the tag from
// the driver and restores it on the RST (netns.test_vlan_offload); the one
// that cannot (not bound to a device: Linux before 6.8, or a driver without
// the kfunc) drops the SYN instead of answering it untagged, on the native
// VLAN. TC keeps the tag in the skb and answers as always.
#include <gtest/gtest.h>

#include "bpf/dataplane_fixture.h"

namespace edgeshed::testing {
namespace {

class StrippedVlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dp_.set_action(EDGESHED_ACTION_RST);
    dp_.set_class_policy(EDGESHED_CLASS_NORMAL, kShedAll);
  }

  void set_strips_tags(bool strips) {
    auto cfg = dp_.config();
    cfg.flags = strips ? cfg.flags | EDGESHED_CFG_F_RX_VLAN_STRIPPED
                       : cfg.flags & ~EDGESHED_CFG_F_RX_VLAN_STRIPPED;
    dp_.set_config(cfg);
  }

  DataplaneFixture dp_;
  const Bytes syn_ = PacketBuilder::syn_v4(40000, kNormalPort).build();
};

TEST_F(StrippedVlanTest, AtXdpAnUnknownTagMeansDropNotAnUntaggedRst) {
  set_strips_tags(true);
  const auto before = dp_.stats();
  EXPECT_EQ(dp_.run(Entry::kXdp, syn_).verdict, Verdict::kDrop);
  const auto after = dp_.stats();
  EXPECT_EQ(global_delta(after, before, EDGESHED_GCTR_RST_VLAN_UNKNOWN), 1u);
  EXPECT_EQ(class_delta(after, before, EDGESHED_CLASS_NORMAL, EDGESHED_CTR_RST_SENT), 0u);
  EXPECT_EQ(class_delta(after, before, EDGESHED_CLASS_NORMAL, EDGESHED_CTR_SHED_FRAC), 1u)
      << "still a shed";
}

TEST_F(StrippedVlanTest, ANicThatKeepsTagsInTheFrameIsAnsweredAsAlways) {
  set_strips_tags(false);
  const auto before = dp_.stats();
  EXPECT_EQ(dp_.run(Entry::kXdp, syn_).verdict, Verdict::kTx);
  EXPECT_EQ(global_delta(dp_.stats(), before, EDGESHED_GCTR_RST_VLAN_UNKNOWN), 0u);
}

TEST_F(StrippedVlanTest, TcKeepsTheTagInTheSkbAndAnswers) {
  set_strips_tags(true);
  const auto before = dp_.stats();
  EXPECT_EQ(dp_.run(Entry::kTc, syn_).verdict, Verdict::kTx);
  EXPECT_EQ(global_delta(dp_.stats(), before, EDGESHED_GCTR_RST_VLAN_UNKNOWN), 0u);
}

}  // namespace
}  // namespace edgeshed::testing
