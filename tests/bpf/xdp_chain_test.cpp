// The neighbour chained behind edgeshed's XDP program (bpf/xdp_chain.bpf.h):
// what edgeshed passes goes on to the program in the slot; what it sheds or
// refuses does not; an empty slot passes as before.
#include <gtest/gtest.h>

#include <bpf/bpf.h>
#include <linux/bpf.h>

#include <iterator>

#include "bpf/dataplane_fixture.h"
#include "common/fd.h"
#include "edgeshed.skel.h"

namespace edgeshed::testing {
namespace {

// The neighbour's verdict, one edgeshed never gives: it says the frame
// reached the neighbour.
constexpr int kNeighbourAction = XDP_REDIRECT;

class XdpChainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // {code, dst_reg, src_reg, off, imm}: r0 = XDP_REDIRECT; exit.
    const bpf_insn prog[] = {
        {BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, kNeighbourAction},
        {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
    };
    // As libbpf loads a SEC("xdp") program: the kernel tail-calls only a
    // program of the caller's expected attach type.
    bpf_prog_load_opts opts{};
    opts.sz = sizeof(opts);
    opts.expected_attach_type = BPF_XDP;
    neighbour_.reset(
        bpf_prog_load(BPF_PROG_TYPE_XDP, "es_neighbour", "GPL", prog, std::size(prog), &opts));
    ASSERT_TRUE(neighbour_.valid()) << "cannot load the neighbour: " << errno;
  }

  int slot() const { return bpf_map__fd(dp_.skeleton()->maps.es_xdp_next); }
  void fill_slot() const {
    const uint32_t zero = 0;
    const int fd = neighbour_.get();
    ASSERT_EQ(bpf_map_update_elem(slot(), &zero, &fd, BPF_ANY), 0) << "errno " << errno;
  }
  RunResult syn(uint16_t dport) const {
    return dp_.run(Entry::kXdp, PacketBuilder::syn_v4(40000, dport, "192.0.2.1").build());
  }

  DataplaneFixture dp_;
  Fd neighbour_;
};

TEST_F(XdpChainTest, EmptySlotPassesAsBefore) {
  EXPECT_EQ(syn(kNormalPort).verdict, Verdict::kPass);
  EXPECT_EQ(syn(kUnprotectedPort).verdict, Verdict::kPass);
}

TEST_F(XdpChainTest, PassesGoOnToTheNeighbour) {
  fill_slot();
  EXPECT_EQ(syn(kNormalPort).retval, static_cast<uint32_t>(kNeighbourAction));  // admitted
  EXPECT_EQ(syn(kUnprotectedPort).retval, static_cast<uint32_t>(kNeighbourAction));
  EXPECT_EQ(dp_.stats().cls[EDGESHED_CLASS_NORMAL][EDGESHED_CTR_ADMITTED], 1u);
}

TEST_F(XdpChainTest, ShedsDoNotReachTheNeighbour) {
  fill_slot();
  dp_.set_class_policy(EDGESHED_CLASS_NORMAL, kShedAll);
  EXPECT_EQ(syn(kNormalPort).verdict, Verdict::kDrop);  // the fixture's action: drop
  dp_.set_action(EDGESHED_ACTION_RST);
  EXPECT_EQ(syn(kNormalPort).verdict, Verdict::kTx);  // the RST
  // Another class's port still passes, on to the neighbour.
  EXPECT_EQ(syn(kCriticalPort).retval, static_cast<uint32_t>(kNeighbourAction));
}

TEST_F(XdpChainTest, EmptiedSlotPassesAgain) {
  fill_slot();
  const uint32_t zero = 0;
  ASSERT_EQ(bpf_map_delete_elem(slot(), &zero), 0);
  EXPECT_EQ(syn(kNormalPort).verdict, Verdict::kPass);
}

}  // namespace
}  // namespace edgeshed::testing
