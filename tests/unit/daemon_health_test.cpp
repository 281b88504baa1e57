// What status says about a daemon that is not deciding, and the start
// history that lets it tell a crash loop from a single death.
#include "cli/daemon_health.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <fstream>

#include "cli/status_model.h"
#include "ipc/run_dir.h"
#include "ipc/start_history.h"
#include "ipc/state.h"

namespace edgeshed {
namespace {

constexpr int64_t kNow = 1'800'000'000'000;

DaemonFacts running(int64_t state_age_ms = 50) {
  DaemonFacts f;
  f.has_state = true;
  f.pid = 4242;
  f.alive = true;
  f.proc_state = 'S';
  f.state_age_ms = state_age_ms;
  f.tick_ms = 100;
  f.starts = {{kNow - 3'600'000, 4242, ""}};
  f.now_unix_ms = kNow;
  return f;
}

TEST(DaemonHealth, ALiveDaemonThatTicksIsRunning) {
  auto h = diagnose_daemon(running());
  EXPECT_EQ(h.state, DaemonState::kRunning);
  EXPECT_EQ(h.why, "the daemon (pid 4242) is running");
}

TEST(DaemonHealth, AStoppedProcessIsStoppedWhateverItsStateAge) {
  for (char letter : {'T', 't'}) {
    auto f = running(5);
    f.proc_state = letter;
    auto h = diagnose_daemon(f);
    EXPECT_EQ(h.state, DaemonState::kStopped) << letter;
    EXPECT_NE(h.why.find("pid 4242) is stopped (SIGSTOP"), std::string::npos) << h.why;
  }
}

TEST(DaemonHealth, HungAfterTenTicksOrTwoSecondsWhicheverIsLonger) {
  EXPECT_EQ(diagnose_daemon(running(2000)).state, DaemonState::kRunning);
  auto h = diagnose_daemon(running(2001));
  EXPECT_EQ(h.state, DaemonState::kHung);
  EXPECT_NE(h.why.find("has not ticked for 2001 ms (tick 100 ms)"), std::string::npos) << h.why;
  auto slow = running(4000);
  slow.tick_ms = 500;  // ten ticks are 5 s
  EXPECT_EQ(diagnose_daemon(slow).state, DaemonState::kRunning);
  slow.state_age_ms = 5001;
  EXPECT_EQ(diagnose_daemon(slow).state, DaemonState::kHung);
}

TEST(DaemonHealth, ALeftoverStateFileOfADeadPidIsADeath) {
  auto f = running(7000);
  f.alive = false;
  auto h = diagnose_daemon(f);
  EXPECT_EQ(h.state, DaemonState::kDied);
  EXPECT_EQ(h.why,
            "the daemon (pid 4242) exited without stopping cleanly: it was killed or "
            "crashed, its last tick was 7000 ms ago");
}

TEST(DaemonHealth, AZombieIsNotAlive) {
  auto f = running();
  f.proc_state = 'Z';
  EXPECT_EQ(diagnose_daemon(f).state, DaemonState::kDied);
}

TEST(DaemonHealth, DiedBeforeItsFirstTick) {
  DaemonFacts f;
  f.now_unix_ms = kNow;
  f.starts = {{kNow - 500, 99, ""}};
  auto h = diagnose_daemon(f);
  EXPECT_EQ(h.state, DaemonState::kDied);
  EXPECT_NE(h.why.find("pid 99"), std::string::npos) << h.why;
}

TEST(DaemonHealth, AFailedLastStartSaysWhy) {
  DaemonFacts f;
  f.now_unix_ms = kNow;
  f.starts = {{kNow - 500, 99, "edgeshed.toml:3:1: daemon.tick = \"1ms\": must be 10ms..10s"}};
  auto h = diagnose_daemon(f);
  EXPECT_EQ(h.state, DaemonState::kStartFailed);
  EXPECT_EQ(h.why,
            "the daemon's last start (500 ms ago) failed: edgeshed.toml:3:1: daemon.tick = "
            "\"1ms\": must be 10ms..10s");
}

TEST(DaemonHealth, ThreeStartsWithinAMinuteWithoutACleanStopAreACrashLoop) {
  DaemonFacts f;
  f.now_unix_ms = kNow;
  f.starts = {{kNow - 61'000, 1, ""}, {kNow - 30'000, 2, ""}, {kNow - 20'000, 3, ""}};
  EXPECT_EQ(diagnose_daemon(f).state, DaemonState::kDied);  // one of the three is too old
  f.starts.push_back({kNow - 2'000, 4, "cannot attach: no such device"});
  auto h = diagnose_daemon(f);
  EXPECT_EQ(h.state, DaemonState::kCrashLooping);
  EXPECT_EQ(h.why,
            "the daemon is crash-looping: 3 starts in the last 60 s without a clean stop; "
            "last failure (2000 ms ago): cannot attach: no such device");
}

TEST(DaemonHealth, ALiveDaemonInACrashLoopIsStillACrashLoop) {
  auto f = running();
  f.starts = {{kNow - 9'000, 1, ""}, {kNow - 6'000, 2, ""}, {kNow - 3'000, 4242, ""}};
  auto h = diagnose_daemon(f);
  EXPECT_EQ(h.state, DaemonState::kCrashLooping);
  EXPECT_NE(h.why.find("(pid 4242 now)"), std::string::npos) << h.why;
}

TEST(DaemonHealth, NothingLeftIsAStopOrNoStartAtAll) {
  DaemonFacts f;
  f.now_unix_ms = kNow;
  EXPECT_EQ(diagnose_daemon(f).state, DaemonState::kNotRunning);
  EXPECT_STREQ(to_string(DaemonState::kCrashLooping), "crash_looping");
}

class StartHistoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("edgeshed-starts-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir() const { return dir_.string(); }
  std::filesystem::path dir_;
};

TEST_F(StartHistoryTest, RecordsStartsAndFailuresAndForgetsThemOnACleanStop) {
  EXPECT_TRUE(ipc::read_start_history(dir())->empty());
  ASSERT_TRUE(ipc::record_start(dir()));
  ASSERT_TRUE(ipc::record_start_failure(dir(), "no such device"));
  auto h = ipc::read_start_history(dir());
  ASSERT_TRUE(h);
  ASSERT_EQ(h->size(), 1u);
  EXPECT_EQ(h->front().pid, getpid());
  EXPECT_EQ(h->front().error, "no such device");
  EXPECT_EQ(std::filesystem::status(dir_ / ipc::kStartHistoryFileName).permissions() &
                std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  EXPECT_TRUE(ipc::forget_start_history(dir()));
  EXPECT_TRUE(ipc::read_start_history(dir())->empty());
  EXPECT_TRUE(ipc::forget_start_history(dir())) << "an absent history is already forgotten";
}

TEST_F(StartHistoryTest, KeepsTheNewestStarts) {
  for (size_t i = 0; i < ipc::kMaxStartsKept + 5; ++i) ASSERT_TRUE(ipc::record_start(dir()));
  EXPECT_EQ(ipc::read_start_history(dir())->size(), ipc::kMaxStartsKept);
}

TEST_F(StartHistoryTest, ABrokenFileIsAnErrorToReadAndIsStartedAnewOnTheNextStart) {
  std::ofstream(dir_ / ipc::kStartHistoryFileName) << "{\"not\": \"a list\"}";
  auto h = ipc::read_start_history(dir());
  ASSERT_FALSE(h);
  EXPECT_NE(h.error().message.find("not a JSON array"), std::string::npos);
  ASSERT_TRUE(ipc::record_start(dir()));
  EXPECT_EQ(ipc::read_start_history(dir())->size(), 1u);
}

// status and top take the daemon's state and its diagnosis from one read of
// the run directory, so a daemon that dies between two reads cannot be shown
// as running with a dead daemon's diagnosis, or the other way round.
using ReadDaemonTest = StartHistoryTest;

void write_state(const std::filesystem::path& dir, pid_t pid) {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  const int64_t monotonic_ms = int64_t{now.tv_sec} * 1000 + now.tv_nsec / 1'000'000;
  ipc::State state;
  state.pid = pid;
  state.monotonic_ms = monotonic_ms;
  state.tick_ms = 100;
  ASSERT_TRUE(ipc::write_state_file(state, (dir / ipc::kStateFileName).string()));
}

TEST_F(ReadDaemonTest, ALiveDaemonsStateComesWithARunningDiagnosis) {
  // The test binary passes for the daemon: its comm is the comm of "self".
  write_state(dir_, getpid());
  const auto d = read_daemon(dir());
  ASSERT_FALSE(d.state.is_null());
  EXPECT_EQ(d.state["pid"], getpid());
  EXPECT_GE(d.state["state_age_ms"].get<int64_t>(), 0);
  EXPECT_EQ(d.health["state"], "running");
}

TEST_F(ReadDaemonTest, ADeadDaemonsLeftoverIsNoStateAndItsDiagnosisSaysSo) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  ASSERT_EQ(waitpid(child, nullptr, 0), child);
  write_state(dir_, child);
  const auto d = read_daemon(dir());
  EXPECT_TRUE(d.state.is_null());
  EXPECT_EQ(d.health["state"], "died");
  EXPECT_NE(d.health["why"].get<std::string>().find(std::to_string(child)), std::string::npos);
}

TEST_F(ReadDaemonTest, NoStateFileIsNotRunning) {
  const auto d = read_daemon(dir());
  EXPECT_TRUE(d.state.is_null());
  EXPECT_EQ(d.health["state"], "not_running");
}

TEST(StatusJson, ADaemonThatIsNotDecidingIsTheReasonOfFailOpenAndOfFailStatic) {
  InterfaceStatus open;
  open.iface = "eth0";
  open.fail_open = true;
  open.heartbeat_timeout_ms = 1000;
  open.fail_open_reason = "no controller heartbeat for 1500 ms (timeout 1000 ms)";
  InterfaceStatus held;
  held.iface = "eth1";
  const auto stopped = health_json({DaemonState::kStopped, "the daemon (pid 7) is stopped"});
  auto s =
      status_json(nullptr, stopped, {InterfaceReading{open, {}, 0}, InterfaceReading{held, {}, 0}});
  EXPECT_EQ(s["daemon_health"]["state"], "stopped");
  EXPECT_EQ(s["interfaces"][0]["fail_open_reason"],
            "no controller heartbeat for 1500 ms (timeout 1000 ms): the daemon (pid 7) is stopped");
  EXPECT_EQ(s["interfaces"][1]["fail_static_note"],
            "heartbeat timeout 0 (fail-static): the last policy published stays in force: the "
            "daemon (pid 7) is stopped");
  const auto fine = health_json({DaemonState::kRunning, "the daemon (pid 7) is running"});
  s = status_json(nullptr, fine, {InterfaceReading{held, {}, 0}});
  EXPECT_FALSE(s["interfaces"][0].contains("fail_static_note"));
}

}  // namespace
}  // namespace edgeshed
