// The daemon's tick on fakes: a data plane that records what is written and
// fails on request, clocks moved by hand, the real control law and signals.
#include "daemon/tick.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/fake_clock.h"
#include "daemon/reload.h"
#include "daemon/runtime_changes_keeper.h"
#include "law/clock.h"
#include "law/control_law.h"
#include "signals/signal_kinds.h"

namespace edgeshed::daemon {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr milliseconds kTick{100};

class FakeWallClock final : public WallClock {
 public:
  WallTime now() const override { return now_; }
  void advance(std::chrono::nanoseconds by) {
    now_ += std::chrono::duration_cast<WallTime::duration>(by);
  }

 private:
  WallTime now_ = WallTime(std::chrono::hours(24 * 365 * 56));
};

// Two interfaces. Reads return what the test set; a write listed in a
// failure set fails once, as a full or vanished map would.
class FakeDataplane final : public DataplaneAccess {
 public:
  struct Interface {
    std::string name;
    Result<ClassCounts> inflight = ClassCounts{};
    std::optional<ClassCounts> peak_inflight;  // empty: the live count
    ClassCounts connections{};
    edgeshed_stats stats{};
    edgeshed_config config{};
    std::vector<edgeshed_policy_set> published;
    // cppcheck-suppress unusedStructMember ; read through ifaces[i], which cppcheck does not follow
    std::vector<uint32_t> modes_written;
    uint32_t salt = 0;
    bool fail_next_publish = false;
    bool fail_next_config_write = false;
    std::vector<IdleConnection> idle;              // what the idle walk lists
    std::vector<std::vector<uint64_t>> reclaimed;  // each reclaim walk's cookies
  };
  // Mutable: the interface is const like Maps (a map write changes the
  // kernel, not the handle), and the fake keeps what was written.
  mutable std::array<Interface, 2> ifaces;

  FakeDataplane() {
    ifaces[0].name = "eth0";
    ifaces[1].name = "eth1";
  }

  size_t interface_count() const override { return ifaces.size(); }
  const std::string& interface_name(size_t i) const override { return ifaces[i].name; }
  Result<LiveCounts> take_live_counts(size_t i) const override {
    if (!ifaces[i].inflight) return ifaces[i].inflight.error();
    LiveCounts live;
    live.inflight = *ifaces[i].inflight;
    live.peak_inflight = ifaces[i].peak_inflight.value_or(live.inflight);
    live.connections = ifaces[i].connections;
    return live;
  }
  Result<edgeshed_stats> read_stats(size_t i) const override { return ifaces[i].stats; }
  Result<std::vector<PortLatency>> read_latency(size_t /*i*/) const override {
    return std::vector<PortLatency>{};
  }
  Result<edgeshed_config> read_config(size_t i) const override { return ifaces[i].config; }
  Status write_config(size_t i, const edgeshed_config& cfg) const override {
    auto& iface = ifaces[i];
    if (std::exchange(iface.fail_next_config_write, false)) return make_error("config map gone");
    iface.config = cfg;
    iface.modes_written.push_back(cfg.mode);
    return {};
  }
  Status publish(size_t i, const edgeshed_policy_set& set, uint64_t /*heartbeat_ns*/,
                 uint32_t salt) const override {
    auto& iface = ifaces[i];
    if (std::exchange(iface.fail_next_publish, false)) return make_error("policy map full");
    iface.published.push_back(set);
    iface.salt = salt;
    return {};
  }
  Result<signals::QueueSnapshot> read_accept_queues() override {
    return make_error("no accept queues in the fake");
  }
  Result<std::vector<IdleConnection>> idle_connections(size_t i) override {
    return ifaces[i].idle;
  }
  Status reclaim(size_t i, const std::vector<uint64_t>& cookies) override {
    ifaces[i].reclaimed.push_back(cookies);
    return {};
  }
};

struct Published {
  // cppcheck-suppress unusedStructMember ; read by the tests through outcomes.back()
  law::Decision decision;
  std::vector<std::string> signal_names;
  std::vector<bool> stale;
};

class RecordingPublisher final : public TickPublisher {
 public:
  void publish(const TickOutcome& o) override {
    Published p{o.decision, {}, {}};
    for (const auto& s : o.signals) {
      p.signal_names.push_back(s.config.name);
      p.stale.push_back(s.stale);
    }
    outcomes.push_back(std::move(p));
  }
  std::vector<Published> outcomes;
};

// The real law, with the inputs the tick gave it kept for the test.
class RecordingLaw final : public law::ControlLaw {
 public:
  RecordingLaw(const law::ControlLawConfig& config, const law::Clock& clock)
      : law_(config, clock) {}
  law::Decision tick(const law::TickInputs& inputs) override {
    inputs_.push_back(inputs);
    return law_.tick(inputs);
  }
  void set_overrides(const law::Overrides& o) override { law_.set_overrides(o); }
  const law::Overrides& overrides() const override { return law_.overrides(); }
  void reconfigure(const law::ControlLawConfig& config) override { law_.reconfigure(config); }
  std::optional<law::Knowledge> limit_knowledge() const override { return law_.limit_knowledge(); }
  void warm_start(const law::Knowledge& knowledge) override { law_.warm_start(knowledge); }
  const law::TickInputs& last_inputs() const { return inputs_.back(); }

 private:
  law::LevelControlLaw law_;
  std::vector<law::TickInputs> inputs_;
};

config::Config parse(const std::string& toml) {
  auto cfg = signals::parse_config("[[interface]]\nname = \"eth0\"\n" + toml, "tick_test.toml");
  EXPECT_TRUE(cfg) << cfg.error().message;
  return cfg ? *cfg : config::Config{};
}

bool admits_all(const edgeshed_policy_set& set) {
  return std::all_of(std::begin(set.cls), std::end(set.cls), [](const edgeshed_class_policy& c) {
    return c.shed_frac == 0 && c.inflight_cap == 0 && c.tokens_per_sec == 0;
  });
}

class TickTest : public ::testing::Test {
 protected:
  // Wired as the daemon wires it: the operator's changes reach the law.
  void start(const std::string& toml) {
    config_ = parse(toml);
    runtime_path_ = ::testing::TempDir() + "/tick_test_runtime.json";
    std::filesystem::remove(runtime_path_);
    law_ = std::make_unique<RecordingLaw>(config_.law_config(), steady_);
    changes_ = std::make_unique<RuntimeChangesKeeper>(
        runtime_path_, wall_, [this](const RuntimeChanges& c) {
          law_->set_overrides(c.law_overrides(wall_.now(), steady_.now()));
          ++applied_;
        });
    tick_ = std::make_unique<Tick>(dataplane_, TickClocks{steady_, wall_}, *law_, *changes_,
                                   publisher_, TickSettings::from(config_));
    replace_signals(config_);
    tick_->begin();
  }

  void replace_signals(const config::Config& cfg) {
    auto set = signals::SignalSet::build(cfg.signals, tick_->readers());
    ASSERT_TRUE(set) << set.error().message;
    tick_->replace_signals(std::move(*set), TickSettings::from(cfg));
  }

  TickReport next_tick(std::chrono::nanoseconds after = kTick) {
    steady_.advance(after);
    wall_.advance(after);
    return tick_->run();
  }

  void set_inflight(uint64_t normal) {
    ClassCounts counts{};
    counts[law::index_of(law::TrafficClass::kNormal)] = normal;
    dataplane_.ifaces[0].inflight = counts;
  }

  const edgeshed_policy_set& last_set(size_t iface = 0) const {
    return dataplane_.ifaces[iface].published.back();
  }

  edgeshed::testing::FakeClock steady_;
  FakeWallClock wall_;
  FakeDataplane dataplane_;
  RecordingPublisher publisher_;
  config::Config config_;
  std::string runtime_path_;
  std::unique_ptr<RecordingLaw> law_;
  std::unique_ptr<RuntimeChangesKeeper> changes_;
  std::unique_ptr<Tick> tick_;
  int applied_ = 0;
};

constexpr const char* kInflightSignal = R"(
[daemon]
tick = "100ms"
all_stale = "fail_open"
[[signal]]
name = "inflight"
kind = "inflight"
target = 10
stale_after = "300ms"
)";

TEST_F(TickTest, StaleSignalsFailOpenAndThePolicyAdmitsAll) {
  start(kInflightSignal);
  set_inflight(30);  // pressure 3: shedding
  for (int i = 0; i < 10; ++i) (void)next_tick();
  const law::Level shedding = publisher_.outcomes.back().decision.level;
  ASSERT_GE(shedding, law::Level::kHigh);
  ASSERT_FALSE(admits_all(last_set()));
  ASSERT_FALSE(publisher_.outcomes.back().stale[0]);

  dataplane_.ifaces[0].inflight = make_error("inflight map gone");
  // Within stale_after the last good sample stands and the level holds.
  for (int i = 1; i <= 3; ++i) {
    TickReport r = next_tick();
    ASSERT_EQ(r.errors.size(), 1u);
    EXPECT_EQ(r.errors[0], "eth0: inflight map gone");
    EXPECT_FALSE(law_->last_inputs().signals[0].stale) << "tick " << i;
    EXPECT_FALSE(r.decision.fail_open);
    EXPECT_EQ(r.decision.level, shedding);
  }
  // 400 ms without a sample, over stale_after: no usable signal.
  TickReport r = next_tick();
  EXPECT_TRUE(law_->last_inputs().signals[0].stale);
  EXPECT_TRUE(publisher_.outcomes.back().stale[0]);
  EXPECT_TRUE(r.decision.all_stale);
  EXPECT_TRUE(r.decision.fail_open);
  EXPECT_TRUE(admits_all(last_set(0)));
  EXPECT_TRUE(admits_all(last_set(1)));
  EXPECT_EQ(last_set().generation, dataplane_.ifaces[0].published.size());
}

TEST_F(TickTest, AConnectionSeenByTheTrackersOfTwoInterfacesCountsOnce) {
  start(kInflightSignal);
  // Both interfaces protect the same port; each tracker counts all 12
  // connections to it, whichever interface they came in on.
  ClassCounts counts{};
  counts[law::index_of(law::TrafficClass::kNormal)] = 12;
  dataplane_.ifaces[0].inflight = counts;
  dataplane_.ifaces[1].inflight = counts;
  (void)next_tick();
  EXPECT_EQ(law_->last_inputs().inflight[law::index_of(law::TrafficClass::kNormal)], 12u);
  EXPECT_DOUBLE_EQ(law_->last_inputs().signals[0].value, 12.0);
  // A tracker attached later has missed some: the fuller count stands.
  counts[law::index_of(law::TrafficClass::kNormal)] = 9;
  dataplane_.ifaces[0].inflight = counts;
  (void)next_tick();
  EXPECT_EQ(law_->last_inputs().inflight[law::index_of(law::TrafficClass::kNormal)], 12u);
}

// The law learns the most requests in service at once between two ticks,
// which a burst reaches and the tick's own reading misses.
TEST_F(TickTest, ThePeakBetweenTicksReachesTheLaw) {
  start(kInflightSignal);
  const size_t normal = law::index_of(law::TrafficClass::kNormal);
  ClassCounts now{}, peak{};
  now[normal] = 3;
  peak[normal] = 40;
  dataplane_.ifaces[0].inflight = now;
  dataplane_.ifaces[0].peak_inflight = peak;
  dataplane_.ifaces[1].inflight = now;
  (void)next_tick();
  EXPECT_EQ(law_->last_inputs().inflight[normal], 3u);
  EXPECT_EQ(law_->last_inputs().peak_inflight[normal], 40u);
}

constexpr const char* kQuietSignal = R"(
[daemon]
tick = "100ms"
[[signal]]
name = "quiet"
kind = "synthetic"
value = 0.1
target = 1
)";

TEST_F(TickTest, PinThatExpiresBetweenTicksEndsAtTheNextTick) {
  start(kQuietSignal);
  auto reply = changes_->handle({{"op", "pin"}, {"level", "high"}, {"for_s", 1}});
  ASSERT_TRUE(reply["ok"].get<bool>()) << reply.dump();
  ASSERT_TRUE(std::filesystem::exists(runtime_path_));
  ASSERT_EQ(applied_, 1);

  TickReport pinned = next_tick(milliseconds(500));
  EXPECT_TRUE(pinned.decision.level_pinned);
  EXPECT_EQ(pinned.decision.level, law::Level::kHigh);
  EXPECT_EQ(last_set().level, static_cast<uint32_t>(law::Level::kHigh));
  EXPECT_EQ(applied_, 1);

  // The pin's second runs out between this tick and the one before.
  TickReport expired = next_tick(milliseconds(600));
  EXPECT_EQ(applied_, 2) << "the expiry is applied once, by the tick";
  EXPECT_FALSE(std::filesystem::exists(runtime_path_)) << "a restart must not bring it back";
  EXPECT_FALSE(expired.decision.level_pinned);
  EXPECT_TRUE(expired.decision.level_changed);
  EXPECT_EQ(expired.decision.level, law::Level::kNormal);
  EXPECT_EQ(last_set().level, static_cast<uint32_t>(law::Level::kNormal));
  EXPECT_TRUE(changes_->changes().empty());
}

TEST_F(TickTest, ReloadBetweenTwoTicksKeepsCountersGenerationAndSalt) {
  start(kQuietSignal);
  const size_t normal = law::index_of(law::TrafficClass::kNormal);
  dataplane_.ifaces[0].stats.cls[normal][EDGESHED_CTR_SHED_CAP] = 12;  // begin() saw 0
  (void)next_tick();
  ASSERT_EQ(law_->last_inputs().sheds[normal], 12u);
  ASSERT_EQ(publisher_.outcomes.back().signal_names, std::vector<std::string>{"quiet"});
  const uint32_t salt = dataplane_.ifaces[0].salt;

  config::Config next = parse(R"(
[daemon]
tick = "100ms"
[[signal]]
name = "loud"
kind = "synthetic"
value = 5.0
target = 1
)");
  replace_signals(next);
  law_->reconfigure(next.law_config());
  dataplane_.ifaces[0].stats.cls[normal][EDGESHED_CTR_SHED_CAP] = 15;

  TickReport r = next_tick();
  EXPECT_EQ(law_->last_inputs().sheds[normal], 3u) << "sheds since the last tick, not since start";
  ASSERT_EQ(law_->last_inputs().signals.size(), 1u);
  EXPECT_EQ(law_->last_inputs().signals[0].name, "loud");
  EXPECT_EQ(publisher_.outcomes.back().signal_names, std::vector<std::string>{"loud"});
  EXPECT_GT(r.decision.pressure, 4.0);
  EXPECT_EQ(last_set().generation, 2u);
  EXPECT_EQ(dataplane_.ifaces[0].salt, salt) << "the salt rotates on its own period only";
}

TEST_F(TickTest, FailedPolicyWriteIsReportedAndRetriedNextTick) {
  start(kQuietSignal);
  dataplane_.ifaces[0].fail_next_publish = true;
  TickReport failed = next_tick();
  EXPECT_EQ(failed.errors, std::vector<std::string>{"eth0: policy map full"});
  EXPECT_TRUE(dataplane_.ifaces[0].published.empty());
  ASSERT_EQ(dataplane_.ifaces[1].published.size(), 1u) << "the other interface is written";
  EXPECT_EQ(publisher_.outcomes.size(), 1u) << "the tick goes on to publish its state";

  TickReport retried = next_tick();
  EXPECT_TRUE(retried.errors.empty());
  ASSERT_EQ(dataplane_.ifaces[0].published.size(), 1u);
  EXPECT_EQ(last_set(0).generation, 2u);
}

TEST_F(TickTest, FailedModeWriteIsReportedAndRetriedNextTick) {
  start(kQuietSignal);
  dataplane_.ifaces[1].fail_next_config_write = true;
  TickReport failed = next_tick();
  EXPECT_EQ(failed.errors, std::vector<std::string>{"eth1: config map gone"});
  EXPECT_TRUE(dataplane_.ifaces[1].modes_written.empty());
  EXPECT_EQ(dataplane_.ifaces[1].published.size(), 1u) << "the policy is written regardless";

  TickReport retried = next_tick();
  EXPECT_TRUE(retried.errors.empty());
  const auto observe = static_cast<uint32_t>(law::Mode::kObserve);
  EXPECT_EQ(dataplane_.ifaces[1].modes_written, std::vector<uint32_t>{observe});

  (void)next_tick();
  EXPECT_EQ(dataplane_.ifaces[1].modes_written.size(), 1u) << "written once it is in place";
  EXPECT_EQ(dataplane_.ifaces[0].modes_written.size(), 2u) << "first write, then the retry";
}

TEST(Reload, InterfaceAndRunDirChangesWaitForTheRestart) {
  config::Config running = parse("[daemon]\nrun_dir = \"/run/a\"\n");
  config::Config next =
      parse("[daemon]\nrun_dir = \"/run/b\"\ntick = \"200ms\"\n[[interface]]\nname = \"eth1\"\n");
  ReloadPlan plan = plan_reload(next, running);
  EXPECT_EQ(plan.deferred.size(), 2u);
  EXPECT_EQ(plan.config.daemon.run_dir, "/run/a");
  ASSERT_EQ(plan.config.interfaces.size(), 1u);
  EXPECT_EQ(plan.config.interfaces[0].name, "eth0");
  EXPECT_EQ(plan.config.daemon.tick, milliseconds(200)) << "the rest takes effect now";

  EXPECT_TRUE(plan_reload(running, running).deferred.empty());
}

TEST(Reload, ListenersKeepTheirAddressesButTheirAnswersChangeNow) {
  config::Config running =
      parse("[metrics]\nlisten = \"127.0.0.1:9477\"\n[agent]\nlisten = \"192.0.2.10:9478\"\n");
  config::Config next = parse(
      "[metrics]\nlisten = \"127.0.0.1:9500\"\nnot_ready_from = \"high\"\n"
      "[agent]\nlisten = \"192.0.2.10:9501\"\nweights = { high = 10 }\nsend_maxconn = false\n");
  ReloadPlan plan = plan_reload(next, running);
  EXPECT_EQ(plan.deferred,
            (std::vector<std::string>{
                "daemon.run_dir and [metrics] listen changes take effect at the next restart",
                "[agent] listen changes take effect at the next restart"}));
  EXPECT_EQ(plan.config.metrics.listen.port, 9477);
  EXPECT_EQ(plan.config.agent.listen.port, 9478);
  EXPECT_TRUE(plan.config.agent.listen.enabled);
  EXPECT_EQ(plan.config.metrics.not_ready_from, law::Level::kHigh);
  EXPECT_EQ(plan.config.agent.reply.weight_percent[law::index_of(law::Level::kHigh)], 10u);
  EXPECT_FALSE(plan.config.agent.reply.send_maxconn);

  config::Config off = parse("[agent]\nlisten = \"off\"\n");
  EXPECT_EQ(plan_reload(off, running).deferred,
            std::vector<std::string>{"[agent] listen changes take effect at the next restart"});
  EXPECT_TRUE(plan_reload(off, running).config.agent.listen.enabled)
      << "still listening until restart";
}

using namespace std::chrono_literals;

// The tick's reclaim step: the longest idle of the class's excess over its
// cap, on the first interface (its walk sees every connection), one batch
// an interval.
TEST(IdleReclaimerTest, ReclaimsTheLongestIdleOfTheExcessOnce) {
  FakeDataplane dataplane;
  dataplane.ifaces[0].idle = {
      {11, 5s, 80, EDGESHED_CLASS_NORMAL}, {12, 500ms, 80, EDGESHED_CLASS_NORMAL},
      {13, 3s, 80, EDGESHED_CLASS_NORMAL}, {14, 2s, 80, EDGESHED_CLASS_NORMAL},
      {15, 9s, 80, EDGESHED_CLASS_NORMAL}, {16, 60s, 80, EDGESHED_CLASS_CRITICAL},
      {17, 9s, 80, EDGESHED_NUM_CLASSES},  // a newer data plane's class: left alone
  };
  IdleReclaimer reclaimer(dataplane, law::IdleReclaimConfig{});
  law::Decision d;
  d.mode = law::Mode::kEnforce;
  d.level = law::Level::kElevated;
  d.policies[law::index_of(law::TrafficClass::kNormal)].inflight_cap = 2;
  ClassCounts connections{};
  connections[law::index_of(law::TrafficClass::kNormal)] = 5;
  connections[law::index_of(law::TrafficClass::kCritical)] = 1;  // no cap: kept

  ASSERT_TRUE(reclaimer.run(d, connections, 10s));
  ASSERT_EQ(dataplane.ifaces[0].reclaimed.size(), 1u);
  EXPECT_EQ(dataplane.ifaces[0].reclaimed[0], (std::vector<uint64_t>{15, 11, 13}));
  EXPECT_TRUE(dataplane.ifaces[1].reclaimed.empty());
  // The next batch is an interval away.
  ASSERT_TRUE(reclaimer.run(d, connections, 10s + 500ms));
  EXPECT_EQ(dataplane.ifaces[0].reclaimed.size(), 1u);
  ASSERT_TRUE(reclaimer.run(d, connections, 12s));
  EXPECT_EQ(dataplane.ifaces[0].reclaimed.size(), 2u);
}

TEST(IdleReclaimerTest, NothingWithTheDataPlaneOffOrAtTheLevelNormal) {
  FakeDataplane dataplane;
  dataplane.ifaces[0].idle = {{11, 5s, 80, EDGESHED_CLASS_NORMAL}};
  IdleReclaimer reclaimer(dataplane, law::IdleReclaimConfig{});
  law::Decision d;
  d.mode = law::Mode::kOff;
  d.level = law::Level::kCritical;
  d.policies[law::index_of(law::TrafficClass::kNormal)].inflight_cap = 0;
  ClassCounts connections{};
  connections[law::index_of(law::TrafficClass::kNormal)] = 5;
  ASSERT_TRUE(reclaimer.run(d, connections, 10s));
  d.mode = law::Mode::kObserve;  // counts what it would reclaim, in the kernel
  d.level = law::Level::kNormal;
  ASSERT_TRUE(reclaimer.run(d, connections, 20s));
  EXPECT_TRUE(dataplane.ifaces[0].reclaimed.empty());
  d.level = law::Level::kHigh;
  ASSERT_TRUE(reclaimer.run(d, connections, 30s));
  EXPECT_EQ(dataplane.ifaces[0].reclaimed.size(), 1u);
}

}  // namespace
}  // namespace edgeshed::daemon
