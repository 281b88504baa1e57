// The host's limits are the host's, not one interface's (issue #38, point
// 4): two interfaces' data planes, pinned as attach pins them, share the
// class rates, the RST ceiling and the reflection limit, so a second
// interface does not double what the host sends or admits.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <string>

#include "bpf/dataplane_fixture.h"
#include "dataplane/pin_dirs.h"

namespace edgeshed::testing {
namespace {

// A pin root of the test's own on bpffs, with two interfaces' directories
// and the host's; removed with every pin in it. bpffs is mounted as attach
// mounts it: on a fresh machine this may be the first test to pin.
class PinRoot {
 public:
  PinRoot()
      : root_("/sys/fs/bpf/es-host-test-" + std::to_string(getpid())), ready_(ensure_bpffs()) {
    if (!ready_) return;
    // A killed run of the same pid left its pins: their state is not ours.
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
    for (const auto& dir : {root_, root_ + "/a", root_ + "/b", host_pin_dir(root_)}) {
      if (ready_) ready_ = make_private_dir(dir);
    }
  }
  ~PinRoot() {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  PinRoot(const PinRoot&) = delete;
  PinRoot& operator=(const PinRoot&) = delete;

  // Why the directories are not there, if they are not.
  const Status& ready() const { return ready_; }
  std::string dir(const char* iface) const { return root_ + "/" + iface; }
  const std::string& root() const { return root_; }

 private:
  std::string root_;
  Status ready_;
};

class HostLimitsTest : public ::testing::TestWithParam<Entry> {
 protected:
  void SetUp() override {
    ASSERT_TRUE(pins_.ready()) << pins_.ready().error().message;
    a_.emplace(pins_.dir("a"));
    b_.emplace(pins_.dir("b"));
    ASSERT_FALSE(HasFailure()) << "the two interfaces' data planes did not load";
  }

  // Every normal SYN shed by a RST on both interfaces.
  void shed_all_with_rst(const DataplaneFixture& dp, uint32_t ceiling,
                         const edgeshed_rst_reflect& reflect) {
    auto cfg = dp.config();
    cfg.action = EDGESHED_ACTION_RST;
    cfg.rst_per_sec_per_cpu = ceiling;
    cfg.rst_reflect = reflect;
    dp.set_config(cfg);
    dp.set_class_policy(EDGESHED_CLASS_NORMAL, kShedAll);
  }

  PinRoot pins_;
  std::optional<DataplaneFixture> a_, b_;
};

TEST_P(HostLimitsTest, TwoInterfacesShareAClassRate) {
  for (const auto* dp : {&*a_, &*b_})
    dp->set_class_policy(EDGESHED_CLASS_NORMAL, {0, 0, 1, 1, 0, 0});
  const Bytes syn = PacketBuilder::syn_v4().build();
  EXPECT_EQ(a_->run(GetParam(), syn).verdict, Verdict::kPass) << "the host's one token";
  EXPECT_EQ(b_->run(GetParam(), syn).verdict, Verdict::kDrop) << "none left on the other interface";
  EXPECT_EQ(a_->run(GetParam(), syn).verdict, Verdict::kDrop);
}

TEST_P(HostLimitsTest, TwoInterfacesShareTheRstCeiling) {
  for (const auto* dp : {&*a_, &*b_}) shed_all_with_rst(*dp, 1, {});
  const Bytes syn = PacketBuilder::syn_v4().build();
  EXPECT_EQ(a_->run(GetParam(), syn).verdict, Verdict::kTx) << "the one RST of this second";
  EXPECT_EQ(b_->run(GetParam(), syn).verdict, Verdict::kDrop) << "the ceiling is the host's";
}

TEST_P(HostLimitsTest, TwoInterfacesShareTheReflectionLimit) {
  for (const auto* dp : {&*a_, &*b_}) shed_all_with_rst(*dp, 1'000'000, {1, 2, 24, 48, {}});
  const Bytes syn = PacketBuilder::syn_v4(40000, kNormalPort, "192.0.2.7").build();
  EXPECT_EQ(a_->run(GetParam(), syn).verdict, Verdict::kTx);
  EXPECT_EQ(b_->run(GetParam(), syn).verdict, Verdict::kTx);
  EXPECT_EQ(a_->run(GetParam(), syn).verdict, Verdict::kDrop)
      << "the network's burst of 2 is spent";
  EXPECT_EQ(b_->run(GetParam(), syn).verdict, Verdict::kDrop);
}

// The last interface's pins gone, the host's go too; not before.
TEST(HostPinsTest, TheHostsPinsGoWithTheLastInterface) {
  PinRoot pins;
  ASSERT_TRUE(pins.ready()) << pins.ready().error().message;
  {
    const DataplaneFixture a(pins.dir("a"));
    const DataplaneFixture b(pins.dir("b"));
    ASSERT_FALSE(HasFailure()) << "the two interfaces' data planes did not load";
    EXPECT_EQ(a.config().abi_version, b.config().abi_version);
  }
  const std::string host = host_pin_dir(pins.root());
  ASSERT_TRUE(std::filesystem::exists(host + "/es_buckets"));
  std::filesystem::remove_all(pins.dir("a"));
  EXPECT_EQ(remove_host_pins_if_last(pins.root()), "");
  EXPECT_TRUE(std::filesystem::exists(host + "/es_buckets")) << "interface b is left";
  std::filesystem::remove_all(pins.dir("b"));
  EXPECT_EQ(remove_host_pins_if_last(pins.root()), "");
  EXPECT_FALSE(std::filesystem::exists(host));
}

INSTANTIATE_TEST_SUITE_P(Entries, HostLimitsTest, ::testing::Values(Entry::kXdp, Entry::kTc),
                         entry_name);

}  // namespace
}  // namespace edgeshed::testing
