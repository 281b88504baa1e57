// The learnt state (daemon/learnt_state.h): the file's round trip, and when
// it is not used (another version, stale, another service); the listeners
// that name the service (daemon/service_identity.h); when the keeper writes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "daemon/learnt_keeper.h"
#include "daemon/learnt_state.h"
#include "daemon/service_identity.h"

namespace edgeshed::daemon {
namespace {

using testing::HasSubstr;

constexpr int64_t kNow = 1'796'000'000'000;  // unix ms
constexpr int64_t kHourMs = 3'600'000;

law::Knowledge knowledge() {
  law::Knowledge k;
  k.floor_seconds = 0.0213;
  k.inflight = 5;
  k.rate = 248.5;
  k.peak_inflight = 13;
  k.readings = 599;
  return k;
}

ServiceIdentity service(uint32_t uid = 33) {
  ServiceIdentity s;
  s.ports = {80, 443};
  s.listeners = {{80, uid}, {443, uid}};
  return s;
}

class LearntStateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // ctest runs each case as its own process, side by side.
    dir_ = ::testing::TempDir() + "/learnt_state_test_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(LearntStateTest, RoundTripsThroughTheFile) {
  ASSERT_TRUE(save_learnt_state(dir_, {service(), knowledge(), kNow}));
  EXPECT_EQ(
      std::filesystem::status(dir_ + "/learnt.json").permissions() & std::filesystem::perms::all,
      std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  auto loaded = load_learnt_state(dir_, service(), kNow + kHourMs);
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_EQ(*loaded, knowledge());
}

TEST_F(LearntStateTest, AnotherVersionIsIgnored) {
  std::string text = to_json_text({service(), knowledge(), kNow});
  const auto at = text.find("\"version\": 1");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 12, "\"version\": 2");
  std::filesystem::create_directories(dir_);
  std::ofstream(dir_ + "/learnt.json") << text;
  auto loaded = load_learnt_state(dir_, service(), kNow);
  ASSERT_FALSE(loaded);
  EXPECT_THAT(loaded.error().message, HasSubstr("version 2, this daemon reads 1"));
}

TEST_F(LearntStateTest, StaleKnowledgeIsIgnored) {
  ASSERT_TRUE(save_learnt_state(dir_, {service(), knowledge(), kNow}));
  EXPECT_TRUE(load_learnt_state(dir_, service(), kNow + 23 * kHourMs));
  auto loaded = load_learnt_state(dir_, service(), kNow + 25 * kHourMs);
  ASSERT_FALSE(loaded);
  EXPECT_THAT(loaded.error().message, HasSubstr("stale, saved 1500 min ago (at most 24 h)"));
  EXPECT_FALSE(load_learnt_state(dir_, service(), kNow - kHourMs)) << "saved in the future";
}

TEST_F(LearntStateTest, AnotherServiceIsIgnored) {
  ASSERT_TRUE(save_learnt_state(dir_, {service(), knowledge(), kNow}));
  auto other_user = load_learnt_state(dir_, service(1000), kNow);
  ASSERT_FALSE(other_user);
  EXPECT_THAT(other_user.error().message, HasSubstr("of another service"));
  EXPECT_THAT(other_user.error().message, HasSubstr("(ports 80 (uid 33), 443 (uid 33); now ports 80 (uid 1000), 443 (uid 1000))"));
  ServiceIdentity other_ports = service();
  other_ports.ports = {8080};
  other_ports.listeners = {};
  EXPECT_FALSE(load_learnt_state(dir_, other_ports, kNow));
  // A listener not up yet says nothing against it.
  ServiceIdentity starting = service();
  starting.listeners = {};
  EXPECT_TRUE(load_learnt_state(dir_, starting, kNow));
}

TEST_F(LearntStateTest, MissingAndMalformedFilesSayWhy) {
  auto missing = load_learnt_state(dir_, service(), kNow);
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error().message, HasSubstr("learnt.json"));
  std::filesystem::create_directories(dir_);
  std::ofstream(dir_ + "/learnt.json") << "{\"version\": 1, \"saved_unix_ms\": 5}";
  auto malformed = load_learnt_state(dir_, service(), kNow);
  ASSERT_FALSE(malformed);
  EXPECT_THAT(malformed.error().message, HasSubstr("malformed"));
  law::Knowledge zero = knowledge();
  zero.rate = 0;
  ASSERT_TRUE(save_learnt_state(dir_, {service(), zero, kNow}));
  EXPECT_FALSE(load_learnt_state(dir_, service(), kNow));
}

TEST(ServiceIdentityTest, ListenersOfTheProtectedPortsOnly) {
  // /proc/net/tcp and tcp6 lines: a listener on 80 (0050) by uid 33, one on
  // 8080 (1F90) not protected, an established connection to 80, and an IPv6
  // listener on 443 (01BB) by uid 0.
  const std::string tcp =
      "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  "
      "timeout inode\n"
      "   0: 00000000:0050 00000000:0000 0A 00000000:00000000 00:00000000 00000000    33        "
      "0 1001 1 0000000000000000 100 0 0 10 0\n"
      "   1: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        "
      "0 1002 1 0000000000000000 100 0 0 10 0\n"
      "   2: 0100007F:0050 0100007F:D431 01 00000000:00000000 00:00000000 00000000    44        "
      "0 1003 1 0000000000000000 20 4 30 10 -1\n";
  const std::string tcp6 =
      "  sl  local_address                         remote_address                        st "
      "tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
      "   0: 00000000000000000000000000000000:01BB 00000000000000000000000000000000:0000 0A "
      "00000000:00000000 00:00000000 00000000     0        0 2001 1 0000000000000000 100 0 0 10 "
      "0\n";
  std::vector<ServiceIdentity::Listener> listeners;
  parse_listeners(tcp, {80, 443}, listeners);
  parse_listeners(tcp6, {80, 443}, listeners);
  ASSERT_EQ(listeners.size(), 2u);
  EXPECT_EQ(listeners[0], (ServiceIdentity::Listener{80, 33}));
  EXPECT_EQ(listeners[1], (ServiceIdentity::Listener{443, 0}));
}

TEST(ServiceIdentityTest, PortsAreSortedOnce) {
  const ServiceIdentity s = current_service({443, 80, 443});
  EXPECT_EQ(s.ports, (std::vector<uint16_t>{80, 443}));
}

TEST_F(LearntStateTest, TheKeeperWritesAMinuteApartAndAtAStop) {
  using std::chrono::seconds;
  LearntKeeper keeper({80});
  EXPECT_FALSE(keeper.load(dir_, kNow).has_value());
  law::Knowledge k = knowledge();
  keeper.keep(k, dir_, seconds(1), kNow);
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/learnt.json")) << "not at the first tick";
  k.readings += 1;
  keeper.keep(k, dir_, seconds(30), kNow);
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/learnt.json"));
  keeper.keep(k, dir_, seconds(62), kNow);
  ASSERT_TRUE(std::filesystem::exists(dir_ + "/learnt.json"));
  EXPECT_EQ(load_learnt_state(dir_, current_service({80}), kNow)->readings, k.readings);
  k.readings += 1;
  keeper.keep(k, dir_, seconds(63), kNow, /*now_or_never=*/true);
  EXPECT_EQ(load_learnt_state(dir_, current_service({80}), kNow)->readings, k.readings);
  LearntKeeper next({80});
  auto loaded = next.load(dir_, kNow);
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->readings, k.readings);
}

}  // namespace
}  // namespace edgeshed::daemon
