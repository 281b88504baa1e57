#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <string>
#include <string_view>

#include "common/duration.h"
#include "common/ip_prefix.h"
#include "config/config.h"
#include "config/signal_table.h"
#include "signals/signal_kinds.h"

namespace edgeshed::config {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// Test documents start with a newline after R"( so that line 1 is the first
// line written; it is dropped here.
std::string_view document(std::string_view text) {
  return text.substr(0, 1) == "\n" ? text.substr(1) : text;
}

Config parsed(std::string_view text) {
  Result<Config> config = signals::parse_config(document(text), "edgeshed.toml");
  EXPECT_TRUE(config.ok()) << config.error().message;
  return config.ok() ? config.value() : Config{};
}

// The error message of a document that must be rejected.
std::string error_of(std::string_view text) {
  Result<Config> config = signals::parse_config(document(text), "edgeshed.toml");
  if (config.ok()) {
    ADD_FAILURE() << "accepted:\n" << text;
    return "";
  }
  return config.error().message;
}

std::filesystem::path example_path() {
  return std::filesystem::path(__FILE__).parent_path() / ".." / ".." / "examples" / "edgeshed.toml";
}

// --- accepted documents

TEST(ConfigTest, EmptyDocumentGivesTheDefaults) {
  const Config config = parsed("");
  EXPECT_EQ(config.daemon.tick, milliseconds(100));
  EXPECT_EQ(config.daemon.on_exit, OnExit::kFailOpen);
  EXPECT_EQ(config.daemon.heartbeat_timeout, seconds(1));
  EXPECT_EQ(config.daemon.all_stale, law::AllStalePolicy::kHold);
  EXPECT_EQ(config.daemon.log_level, "info");
  EXPECT_EQ(config.dataplane.mode, law::Mode::kObserve);
  EXPECT_EQ(config.dataplane.action, Action::kRst);
  EXPECT_EQ(config.dataplane.draw, Draw::kSourceHash);
  EXPECT_EQ(config.dataplane.salt_rotation, seconds(60));
  EXPECT_EQ(config.dataplane.rst_per_sec_per_cpu, EDGESHED_DEFAULT_RST_PER_SEC_PER_CPU);
  EXPECT_EQ(config.dataplane.rst_reflect.per_sec, 1000u);
  EXPECT_EQ(config.dataplane.rst_reflect.burst, 4000u);
  EXPECT_EQ(config.dataplane.rst_reflect.prefix_v4, 24u);
  EXPECT_EQ(config.dataplane.rst_reflect.prefix_v6, 48u);
  EXPECT_EQ(config.dataplane.rst_reflect.per_conn, 8u);
  EXPECT_EQ(config.dataplane.hash_prefix_v4, 32u);
  EXPECT_EQ(config.dataplane.hash_prefix_v6, 64u);
  EXPECT_TRUE(config.interfaces.empty());
  ASSERT_EQ(config.signals.size(), 1u);  // the default: how full the limit is
  EXPECT_EQ(config.signals[0].kind, "limit");
  EXPECT_TRUE(config.default_signals);
  EXPECT_EQ(config.daemon.nice, -10);
  EXPECT_EQ(config.critical_cap, law::kUnlimited);
  for (law::Level level : law::kAllLevels) {
    for (law::TrafficClass c : law::kAllClasses) {
      EXPECT_EQ(config.policy.at(level, c),
                law::default_policy_table(law::kUnlimited, /*cap_below_high=*/true).at(level, c));
    }
  }
  EXPECT_EQ(config.limit, law::LimitConfig{});
}

TEST(ConfigTest, ExampleFileParsesAndShowsTheDefaults) {
  Result<Config> loaded = signals::load_config(example_path().string());
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  const Config& example = loaded.value();
  const Config defaults = parsed("");
  // Every default the example writes out equals the built-in one.
  EXPECT_EQ(example.daemon.tick, defaults.daemon.tick);
  EXPECT_EQ(example.daemon.heartbeat_timeout, defaults.daemon.heartbeat_timeout);
  EXPECT_EQ(example.daemon.all_stale, defaults.daemon.all_stale);
  EXPECT_EQ(example.dataplane.mode, defaults.dataplane.mode);
  EXPECT_EQ(example.dataplane.salt_rotation, defaults.dataplane.salt_rotation);
  EXPECT_EQ(example.dataplane.events_per_sec_per_cpu, defaults.dataplane.events_per_sec_per_cpu);
  EXPECT_EQ(example.dataplane.event_sample, defaults.dataplane.event_sample);
  EXPECT_EQ(example.dataplane.hash_prefix_v4, defaults.dataplane.hash_prefix_v4);
  EXPECT_EQ(example.dataplane.hash_prefix_v6, defaults.dataplane.hash_prefix_v6);
  EXPECT_EQ(example.daemon.run_dir, defaults.daemon.run_dir);
  EXPECT_EQ(example.metrics.listen.address, defaults.metrics.listen.address);
  EXPECT_EQ(example.metrics.listen.port, defaults.metrics.listen.port);
  EXPECT_TRUE(example.metrics.listen.enabled);
  EXPECT_EQ(example.levels.high.enter, defaults.levels.high.enter);
  EXPECT_EQ(example.levels.critical.exit, defaults.levels.critical.exit);
  EXPECT_EQ(example.levels.exit_after, defaults.levels.exit_after);
  EXPECT_EQ(example.limit, defaults.limit);
  EXPECT_EQ(example.critical_floor.fraction, defaults.critical_floor.fraction);
  EXPECT_EQ(example.critical_floor.inflight, defaults.critical_floor.inflight);
  for (law::Level level : law::kAllLevels) {
    for (law::TrafficClass c : law::kAllClasses) {
      EXPECT_EQ(example.policy.at(level, c), defaults.policy.at(level, c)) << level << "." << c;
    }
  }
  ASSERT_EQ(example.interfaces.size(), 1u);
  EXPECT_EQ(example.interfaces[0].name, "eth0");
  ASSERT_EQ(example.ports.size(), 3u);
  EXPECT_EQ(example.ports[1].port, 443);
  EXPECT_EQ(example.ports[2].port, 443);
  EXPECT_EQ(example.ports[2].protocol, Protocol::kQuic);
  ASSERT_EQ(example.prefixes.size(), 2u);
  EXPECT_EQ(example.prefixes[1].prefix.family, IpFamily::kV6);
  ASSERT_EQ(example.signals.size(), 5u);
  EXPECT_EQ(example.signals[1].kind, "accept_queue");
  EXPECT_TRUE(example.signals[2].hard_safety);
  EXPECT_EQ(example.signals[3].kind, "file");
  EXPECT_EQ(example.signals[4].name, "latency_objective_443");
}

TEST(ConfigTest, ReadsEverySection) {
  const Config config = parsed(R"(
[daemon]
tick = "50ms"
on_exit = "detach"
heartbeat_timeout = "0"
all_stale = "fail_open"
log_level = "debug"

[dataplane]
mode = "enforce"
action = "drop"
draw = "random"
salt_rotation = "5m"
rst_per_sec_per_cpu = 0
rst_reflect_per_sec = 0
rst_reflect_burst = 50
rst_reflect_prefix_v4 = 16
rst_reflect_prefix_v6 = 32
rst_reflect_per_conn = 0
hash_prefix_v4 = 24
hash_prefix_v6 = 48

[[interface]]
name = "veth1"
hook = "tc"

[[port]]
port = 8080
class = "background"

[[prefix]]
cidr = "10.0.0.0/8"
class = "background"

[levels]
enter_after = 3
critical_enter_after = 2
exit_after = "1.5s"
[levels.high]
enter = 1.5
exit = 1.2

[policy.high.normal]
action = "fraction"
fraction = 0.25
tokens_per_sec = 500
[policy.elevated.background]
action = "cap"
cap = 12

[limit]
algorithm = "aimd"
initial = 30
min = 5
max = 300
latency_threshold = "250ms"
increase = 2
backoff = 0.75

[critical]
floor_fraction = 0.9
floor_inflight = 8
cap = 64

[[signal]]
name = "probe-p90"
kind = "probe"
target = 0.05
stale_after = "2s"
address = "127.0.0.1"
port = 80
http_path = "/health"

[[signal]]
name = "injected"
kind = "file"
target = 1.0
path = "/tmp/pressure"
)");
  EXPECT_EQ(config.daemon.tick, milliseconds(50));
  EXPECT_EQ(config.daemon.on_exit, OnExit::kDetach);
  EXPECT_EQ(config.daemon.heartbeat_timeout, milliseconds(0));
  EXPECT_EQ(config.daemon.all_stale, law::AllStalePolicy::kFailOpen);
  EXPECT_EQ(config.daemon.log_level, "debug");
  EXPECT_EQ(config.dataplane.mode, law::Mode::kEnforce);
  EXPECT_EQ(config.dataplane.action, Action::kDrop);
  EXPECT_EQ(config.dataplane.draw, Draw::kRandom);
  EXPECT_EQ(config.dataplane.salt_rotation, std::chrono::minutes(5));
  EXPECT_EQ(config.dataplane.rst_per_sec_per_cpu, 0u);
  const auto reflect = config.dataplane.rst_reflect.to_abi();
  EXPECT_EQ(reflect.per_sec, 0u);
  EXPECT_EQ(reflect.burst, 50u);
  EXPECT_EQ(reflect.prefix4, 16u);
  EXPECT_EQ(reflect.prefix6, 32u);
  EXPECT_EQ(reflect.per_conn, 0u);
  EXPECT_EQ(config.dataplane.hash_prefix_v4, 24u);
  EXPECT_EQ(config.dataplane.hash_prefix_v6, 48u);
  ASSERT_EQ(config.interfaces.size(), 1u);
  EXPECT_EQ(config.interfaces[0].hook, Hook::kTc);
  ASSERT_EQ(config.ports.size(), 1u);
  EXPECT_EQ(config.ports[0].traffic_class, law::TrafficClass::kBackground);
  ASSERT_EQ(config.prefixes.size(), 1u);
  EXPECT_EQ(to_string(config.prefixes[0].prefix), "10.0.0.0/8");
  EXPECT_EQ(config.levels.enter_after, 3u);
  EXPECT_EQ(config.levels.critical_enter_after, 2u);
  EXPECT_EQ(config.levels.exit_after, milliseconds(1500));
  EXPECT_EQ(config.levels.high.enter, 1.5);
  EXPECT_EQ(config.levels.high.exit, 1.2);
  EXPECT_EQ(config.levels.elevated.enter, 1.0);  // untouched default

  const law::PolicyRule& normal = config.policy.at(law::Level::kHigh, law::TrafficClass::kNormal);
  EXPECT_EQ(normal.action, law::PolicyAction::kFraction);
  EXPECT_EQ(normal.fraction, 0.25);
  EXPECT_EQ(normal.tokens_per_sec, 500u);
  EXPECT_EQ(normal.burst, 500u);  // default: one second's worth
  EXPECT_EQ(config.policy.at(law::Level::kElevated, law::TrafficClass::kBackground),
            law::PolicyRule::cap_fixed(12));
  // [critical] cap is the default of the critical cell at level critical.
  EXPECT_EQ(config.policy.at(law::Level::kCritical, law::TrafficClass::kCritical),
            law::PolicyRule::cap_fixed(64));

  EXPECT_EQ(config.limit.algorithm, law::LimitAlgorithmKind::kAimd);
  EXPECT_EQ(config.limit.aimd.initial, 30u);
  EXPECT_EQ(config.limit.aimd.min, 5u);
  EXPECT_EQ(config.limit.aimd.max, 300u);
  EXPECT_DOUBLE_EQ(config.limit.aimd.latency_threshold_seconds, 0.25);
  EXPECT_EQ(config.limit.aimd.increase, 2u);
  EXPECT_EQ(config.limit.aimd.backoff, 0.75);

  EXPECT_EQ(config.critical_floor.fraction, 0.9);
  EXPECT_EQ(config.critical_floor.inflight, 8u);
  EXPECT_EQ(config.critical_cap, 64u);

  ASSERT_EQ(config.signals.size(), 2u);
  const SignalConfig& probe = config.signals[0];
  EXPECT_EQ(probe.name, "probe-p90");
  EXPECT_EQ(probe.kind, "probe");
  EXPECT_EQ(probe.target, 0.05);
  EXPECT_EQ(probe.stale_after, seconds(2));
  ASSERT_NE(config::signal_keys(probe).get("http_path"), nullptr);
  EXPECT_EQ(config::signal_keys(probe)["http_path"].value_or(std::string()), "/health");
  EXPECT_EQ(probe.locate("http_path"), "edgeshed.toml:71:1: signal[0].http_path");
  EXPECT_EQ(config::signal_keys(config.signals[1])["path"].value_or(std::string()),
            "/tmp/pressure");
}

TEST(ConfigTest, LawConfigCarriesWhatTheLawNeeds) {
  const Config config = parsed(R"(
[daemon]
all_stale = "fail_open"
[dataplane]
mode = "enforce"
[critical]
floor_inflight = 4
[levels.elevated]
enter = 0.9
)");
  const law::ControlLawConfig law = config.law_config();
  EXPECT_EQ(law.all_stale, law::AllStalePolicy::kFailOpen);
  EXPECT_EQ(law.mode, law::Mode::kEnforce);
  EXPECT_EQ(law.critical_floor.inflight, 4u);
  EXPECT_EQ(law.levels.elevated.enter, 0.9);
}

TEST(ConfigTest, ZeroFloorAllowsShedingCritical) {
  const Config config = parsed(R"(
[critical]
floor_fraction = 0.0
[policy.critical.critical]
action = "shed"
)");
  EXPECT_EQ(config.policy.at(law::Level::kCritical, law::TrafficClass::kCritical),
            law::PolicyRule::shed_all());
}

TEST(ConfigTest, ParsingIsSideEffectFree) {
  const std::string text = "[daemon]\ntick = \"200ms\"\n";
  const Config first = parsed(text);
  const Config second = parsed(text);
  EXPECT_EQ(first.daemon.tick, second.daemon.tick);
  EXPECT_FALSE(signals::parse_config("[daemon]\ntick = 1\n", "a.toml").ok());
  EXPECT_EQ(parsed(text).daemon.tick, milliseconds(200));  // a failed parse changed nothing
}

// --- rejected documents: one test per message

TEST(ConfigErrorTest, SyntaxError) {
  EXPECT_THAT(error_of("[daemon\ntick = 1\n"), StartsWith("edgeshed.toml:1:"));
}

TEST(ConfigErrorTest, UnknownSectionSuggestsTheClosest) {
  EXPECT_EQ(error_of(R"(
[levls]
enter_after = 2
)"),
            "edgeshed.toml:1:2: unknown section \"levls\"; did you mean \"levels\"? (the "
            "sections are agent, critical, daemon, dataplane, interface, levels, limit, metrics, "
            "policy, port, prefix, signal)");
}

// A section nowhere near a real one: the list says what there is.
TEST(ConfigErrorTest, UnknownSectionListsTheSections) {
  EXPECT_THAT(error_of("[shedding]\nx = 1\n"),
              HasSubstr("unknown section \"shedding\" (the sections are agent, critical, daemon"));
}

// Each interface carries where its name is, for the daemon's error about
// an interface this host does not have.
TEST(ConfigTest, AnInterfaceKnowsWhereItsNameIs) {
  auto cfg = signals::parse_config("[[port]]\nport = 80\n[[interface]]\nname = \"eth9\"\n",
                                   "edgeshed.toml");
  ASSERT_TRUE(cfg) << cfg.error().message;
  EXPECT_EQ(cfg->interfaces.at(0).where, "edgeshed.toml:4:8: interface[0].name");
}

TEST(ConfigErrorTest, UnknownKeySuggestsTheClosest) {
  EXPECT_EQ(error_of(R"(
[daemon]
tik = "100ms"
)"),
            "edgeshed.toml:2:1: unknown key \"daemon.tik\"; did you mean \"daemon.tick\"?");
}

TEST(ConfigErrorTest, UnknownKeyWithoutNearMiss) {
  EXPECT_EQ(error_of(R"(
[dataplane]
colour = "blue"
)"),
            "edgeshed.toml:2:1: unknown key \"dataplane.colour\"");
}

TEST(ConfigErrorTest, DurationWithoutUnit) {
  EXPECT_EQ(error_of(R"(
[daemon]
tick = "100"
)"),
            "edgeshed.toml:2:1: daemon.tick = \"100\": expected a number and a unit (us, ms, s, "
            "m, h), e.g. \"100ms\"");
}

TEST(ConfigErrorTest, DurationOfWrongType) {
  EXPECT_EQ(error_of(R"(
[daemon]
tick = 100
)"),
            "edgeshed.toml:2:1: daemon.tick = 100: must be a duration string like \"100ms\", "
            "must be between 10ms and 10s");
}

TEST(ConfigErrorTest, DurationOutOfRange) {
  EXPECT_EQ(error_of(R"(
[daemon]
tick = "5ms"
)"),
            "edgeshed.toml:2:1: daemon.tick = \"5ms\": must be between 10ms and 10s");
}

TEST(ConfigErrorTest, HeartbeatShorterThanTwoTicks) {
  EXPECT_EQ(error_of(R"(
[daemon]
tick = "1s"
heartbeat_timeout = "1500ms"
)"),
            "edgeshed.toml:3:1: daemon.heartbeat_timeout = \"1500ms\": must be 0 or at least 2 "
            "x daemon.tick (2s)");
}

TEST(ConfigErrorTest, DefaultHeartbeatTooShortForALongTick) {
  EXPECT_EQ(error_of(R"(
[daemon]
tick = "2s"
)"),
            "edgeshed.toml:2:1: daemon.tick = \"2s\": must be 0 or at least 2 x daemon.tick "
            "(4s)");
}

TEST(ConfigErrorTest, UnknownChoice) {
  EXPECT_EQ(error_of(R"(
[daemon]
on_exit = "stay"
)"),
            "edgeshed.toml:2:1: daemon.on_exit = \"stay\": must be one of \"fail_open\", "
            "\"detach\"");
}

TEST(ConfigErrorTest, UnknownAllStale) {
  EXPECT_THAT(error_of("[daemon]\nall_stale = \"drop\"\n"),
              HasSubstr("edgeshed.toml:2:1: daemon.all_stale = \"drop\": must be one of \"hold\", "
                        "\"fail_open\""));
}

TEST(ConfigErrorTest, UnknownLogLevel) {
  EXPECT_THAT(error_of("[daemon]\nlog_level = \"verbose\"\n"),
              HasSubstr("edgeshed.toml:2:1: daemon.log_level = \"verbose\": must be one of "
                        "\"trace\", \"debug\", \"info\""));
}

TEST(ConfigErrorTest, UnknownMode) {
  EXPECT_EQ(error_of("[dataplane]\nmode = \"on\"\n"),
            "edgeshed.toml:2:1: dataplane.mode = \"on\": must be one of \"off\", \"observe\", "
            "\"enforce\"");
}

TEST(ConfigErrorTest, UnknownActionAndDraw) {
  EXPECT_EQ(error_of("[dataplane]\naction = \"reject\"\ndraw = \"hash\"\n"),
            "edgeshed.toml:2:1: dataplane.action = \"reject\": must be one of \"drop\", \"rst\"\n"
            "edgeshed.toml:3:1: dataplane.draw = \"hash\": must be one of \"source_hash\", "
            "\"random\"");
}

TEST(ConfigErrorTest, SaltRotationOutOfRange) {
  EXPECT_EQ(error_of("[dataplane]\nsalt_rotation = \"500ms\"\n"),
            "edgeshed.toml:2:1: dataplane.salt_rotation = \"500ms\": must be between 1s and 24h");
}

TEST(ConfigErrorTest, IntegerOutOfRangeOrNotAnInteger) {
  EXPECT_EQ(error_of("[dataplane]\nrst_per_sec_per_cpu = -1\n"),
            "edgeshed.toml:2:1: dataplane.rst_per_sec_per_cpu = -1: must be an integer in [0, "
            "10000000]");
  EXPECT_EQ(error_of("[dataplane]\nhash_prefix_v6 = 129\n"),
            "edgeshed.toml:2:1: dataplane.hash_prefix_v6 = 129: must be an integer in [1, 128]");
  EXPECT_EQ(error_of("[dataplane]\nhash_prefix_v4 = 0\n"),
            "edgeshed.toml:2:1: dataplane.hash_prefix_v4 = 0: must be an integer in [1, 32]");
  EXPECT_EQ(error_of("[dataplane]\nrst_reflect_per_conn = 65536\n"),
            "edgeshed.toml:2:1: dataplane.rst_reflect_per_conn = 65536: must be an integer in [0, "
            "65535]");
  EXPECT_EQ(error_of("[dataplane]\nrst_reflect_burst = 0\n"),
            "edgeshed.toml:2:1: dataplane.rst_reflect_burst = 0: must be an integer in [1, "
            "10000000]");
  EXPECT_EQ(
      error_of("[dataplane]\nrst_reflect_prefix_v4 = 33\n"),
      "edgeshed.toml:2:1: dataplane.rst_reflect_prefix_v4 = 33: must be an integer in [1, 32]");
  EXPECT_EQ(error_of("[dataplane]\nrst_per_sec_per_cpu = 1.5\n"),
            "edgeshed.toml:2:1: dataplane.rst_per_sec_per_cpu = 1.5: must be an integer in [0, "
            "10000000]");
}

TEST(ConfigErrorTest, SectionOfWrongType) {
  EXPECT_EQ(error_of("daemon = 1\n"), "edgeshed.toml:1:1: daemon = 1: must be a table ([daemon])");
}

TEST(ConfigErrorTest, InterfaceWrittenAsATable) {
  EXPECT_EQ(error_of("[interface]\nname = \"eth0\"\n"),
            "edgeshed.toml:1:2: interface = (a table): must be an array of tables ([[interface]])");
}

TEST(ConfigErrorTest, InterfaceWithoutName) {
  EXPECT_EQ(error_of("[[interface]]\nhook = \"tc\"\n"),
            "edgeshed.toml:1:1: interface[0]: missing required key \"name\"");
}

TEST(ConfigErrorTest, InterfaceNameTooLong) {
  EXPECT_EQ(error_of("[[interface]]\nname = \"a-very-long-ifname\"\n"),
            "edgeshed.toml:2:1: interface[0].name = \"a-very-long-ifname\": must be an interface "
            "name of 1-15 characters without '/', ':' or spaces");
}

TEST(ConfigErrorTest, DuplicateInterface) {
  EXPECT_EQ(error_of(R"(
[[interface]]
name = "eth0"
[[interface]]
name = "eth0"
hook = "xdp-generic"
)"),
            "edgeshed.toml:4:1: interface[1].name = \"eth0\": duplicate of interface[0]");
}

TEST(ConfigErrorTest, UnknownHook) {
  EXPECT_EQ(error_of("[[interface]]\nname = \"eth0\"\nhook = \"skb\"\n"),
            "edgeshed.toml:3:1: interface[0].hook = \"skb\": must be one of \"xdp\", "
            "\"xdp-generic\", \"tc\"");
}

TEST(ConfigErrorTest, PortOutOfRange) {
  EXPECT_EQ(error_of("[[port]]\nport = 0\n"),
            "edgeshed.toml:2:1: port[0].port = 0: must be an integer in [1, 65535]");
  EXPECT_EQ(error_of("[[port]]\nport = 65536\n"),
            "edgeshed.toml:2:1: port[0].port = 65536: must be an integer in [1, 65535]");
}

TEST(ConfigErrorTest, PortMissing) {
  EXPECT_EQ(error_of("[[port]]\nclass = \"normal\"\n"),
            "edgeshed.toml:1:1: port[0]: missing required key \"port\"");
}

TEST(ConfigErrorTest, DuplicatePort) {
  EXPECT_EQ(error_of("[[port]]\nport = 80\n[[port]]\nport = 80\n"),
            "edgeshed.toml:4:1: port[1].port = 80: duplicate of port[0]");
}

TEST(ConfigTest, OnePortNumberForBothProtocols) {
  const Config config = parsed("[[port]]\nport = 443\n[[port]]\nport = 443\nprotocol = \"quic\"\n");
  ASSERT_EQ(config.ports.size(), 2u);
  EXPECT_EQ(config.ports[0].protocol, Protocol::kTcp);
  EXPECT_EQ(config.ports[1].protocol, Protocol::kQuic);
}

TEST(ConfigErrorTest, DuplicateQuicPort) {
  EXPECT_EQ(error_of("[[port]]\nport = 443\nprotocol = \"quic\"\n"
                     "[[port]]\nport = 443\nprotocol = \"quic\"\n"),
            "edgeshed.toml:5:1: port[1].port = 443: duplicate of port[0]");
}

TEST(ConfigErrorTest, ProtocolsOfOnePortShareTheirClass) {
  EXPECT_EQ(error_of("[[port]]\nport = 443\n"
                     "[[port]]\nport = 443\nprotocol = \"quic\"\nclass = \"background\"\n"),
            "edgeshed.toml:6:1: port[1].class = \"background\": must be the class of port[0]: "
            "the protocols of one port share their class");
}

TEST(ConfigErrorTest, NoLatencyObjectiveOnAQuicPort) {
  EXPECT_EQ(error_of("[[port]]\nport = 443\nprotocol = \"quic\"\nlatency_objective = \"50ms\"\n"),
            "edgeshed.toml:4:1: port[0].latency_objective = \"50ms\": the kernel measures response "
            "times of TCP ports only; state it on the TCP port");
  EXPECT_EQ(error_of("[[port]]\nport = 443\nprotocol = \"udp\"\n"),
            "edgeshed.toml:3:1: port[0].protocol = \"udp\": must be one of \"tcp\", \"quic\"");
}

TEST(ConfigTest, KeepAliveRequestsPassUnlessAPortRefusesThem) {
  const Config config = parsed(
      "[[port]]\nport = 80\n[[port]]\nport = 443\nkeepalive = \"refuse\"\n"
      "[[port]]\nport = 8080\nkeepalive = \"reclaim\"\n");
  ASSERT_EQ(config.ports.size(), 3u);
  EXPECT_EQ(config.ports[0].keepalive, EDGESHED_REQUESTS_PASS);
  EXPECT_EQ(config.ports[1].keepalive, EDGESHED_REQUESTS_REFUSE);
  EXPECT_EQ(config.ports[2].keepalive, EDGESHED_REQUESTS_RECLAIM);
  EXPECT_EQ(error_of("[[port]]\nport = 443\nkeepalive = \"close\"\n"),
            "edgeshed.toml:3:1: port[0].keepalive = \"close\": must be one of \"pass\", "
            "\"refuse\", \"reclaim\"");
  EXPECT_EQ(error_of("[[port]]\nport = 443\nprotocol = \"quic\"\nkeepalive = \"refuse\"\n"),
            "edgeshed.toml:4:1: port[0].keepalive = \"refuse\": open connections are refused or "
            "reclaimed on TCP ports only");
}

TEST(ConfigTest, APortsServiceMayRunInANamespaceOfItsOwn) {
  const Config config = parsed(
      "[[port]]\nport = 80\n"
      "[[port]]\nport = 8080\nnetns = \"/run/netns/pod-a\"\n"
      "[[port]]\nport = 8081\npid = 4242\n"
      "[[port]]\nport = 8082\ncgroup = \"/sys/fs/cgroup/kubepods.slice/pod-b\"\n");
  ASSERT_EQ(config.ports.size(), 4u);
  EXPECT_FALSE(config.ports[0].netns);
  ASSERT_TRUE(config.ports[1].netns);
  EXPECT_EQ(config.ports[1].netns->describe(), "netns /run/netns/pod-a");
  ASSERT_TRUE(config.ports[2].netns);
  EXPECT_EQ(config.ports[2].netns->kind, NetnsRef::Kind::kPid);
  EXPECT_EQ(config.ports[2].netns->describe(), "pid 4242");
  ASSERT_TRUE(config.ports[3].netns);
  EXPECT_EQ(config.ports[3].netns->describe(), "cgroup /sys/fs/cgroup/kubepods.slice/pod-b");
  const Config by_port = parsed("[[port]]\nport = 8083\nnetns = \"listener\"\n");
  ASSERT_TRUE(by_port.ports[0].netns);
  EXPECT_EQ(by_port.ports[0].netns->kind, NetnsRef::Kind::kListener);
  EXPECT_EQ(by_port.ports[0].netns->port, 8083);
  EXPECT_EQ(by_port.ports[0].netns->describe(), "netns listener (port 8083)");
}

TEST(ConfigTest, AContainersPortRefusesAndReclaimsAsTheHostsDo) {
  const auto config = parsed("[[port]]\nport = 8080\npid = 7\nkeepalive = \"refuse\"\n");
  ASSERT_EQ(config.ports.size(), 1u);
  EXPECT_EQ(config.ports[0].keepalive, EDGESHED_REQUESTS_REFUSE);
  ASSERT_TRUE(config.ports[0].netns);
  EXPECT_EQ(config.ports[0].netns->describe(), "pid 7");
}

TEST(ConfigErrorTest, APortsNamespaceIsNamedOnceAndWhole) {
  EXPECT_EQ(error_of("[[port]]\nport = 8080\nnetns = \"pod-a\"\n"),
            "edgeshed.toml:3:1: port[0].netns = \"pod-a\": must be an absolute path or "
            "\"listener\"");
  EXPECT_EQ(error_of("[[port]]\nport = 8080\npid = 0\n"),
            "edgeshed.toml:3:1: port[0].pid = 0: must be an integer in [1, 4194304]");
  EXPECT_EQ(error_of("[[port]]\nport = 8080\npid = 1\ncgroup = \"/sys/fs/cgroup/a\"\n"),
            "edgeshed.toml:4:1: port[0].cgroup = \"/sys/fs/cgroup/a\": names the service's "
            "network namespace, as pid does already: give one of netns, pid and cgroup");
  EXPECT_EQ(error_of("[[port]]\nport = 8080\nnetns = \"/run/netns/a\"\n"
                     "[[port]]\nport = 8080\nnetns = \"/run/netns/a\"\n"),
            "edgeshed.toml:5:1: port[1].port = 8080: duplicate of port[0]");
}

// One port number served in two namespaces (two pods on 8080) is two
// services; within one namespace, a port is listed once per protocol.
TEST(ConfigTest, APortNumberMayBeServedInSeveralNamespaces) {
  const Config cfg = parsed(
      "[[port]]\nport = 8080\nnetns = \"/run/netns/a\"\n"
      "[[port]]\nport = 8080\nnetns = \"/run/netns/b\"\n"
      "[[port]]\nport = 8080\n");
  ASSERT_EQ(cfg.ports.size(), 3u);
  EXPECT_EQ(cfg.ports[0].netns->path, "/run/netns/a");
  EXPECT_EQ(cfg.ports[1].netns->path, "/run/netns/b");
  EXPECT_FALSE(cfg.ports[2].netns);
}

TEST(ConfigErrorTest, UnknownClass) {
  EXPECT_EQ(error_of("[[port]]\nport = 80\nclass = \"gold\"\n"),
            "edgeshed.toml:3:1: port[0].class = \"gold\": must be one of \"critical\", "
            "\"normal\", \"background\"");
}

TEST(ConfigErrorTest, PrefixWithHostBits) {
  EXPECT_EQ(error_of("[[prefix]]\ncidr = \"192.0.2.1/24\"\nclass = \"critical\"\n"),
            "edgeshed.toml:2:1: prefix[0].cidr = \"192.0.2.1/24\": host bits set; did you mean "
            "\"192.0.2.0/24\"?");
}

TEST(ConfigErrorTest, PrefixNotAnAddress) {
  EXPECT_EQ(error_of("[[prefix]]\ncidr = \"192.0.2/24\"\nclass = \"critical\"\n"),
            "edgeshed.toml:2:1: prefix[0].cidr = \"192.0.2/24\": \"192.0.2\" is not an IPv4 or "
            "IPv6 address");
}

TEST(ConfigErrorTest, PrefixLengthOutOfRange) {
  EXPECT_EQ(error_of("[[prefix]]\ncidr = \"2001:db8::/129\"\nclass = \"critical\"\n"),
            "edgeshed.toml:2:1: prefix[0].cidr = \"2001:db8::/129\": prefix length must be "
            "0..128");
}

TEST(ConfigErrorTest, PrefixWithoutLength) {
  EXPECT_EQ(error_of("[[prefix]]\ncidr = \"192.0.2.0\"\nclass = \"critical\"\n"),
            "edgeshed.toml:2:1: prefix[0].cidr = \"192.0.2.0\": expected address/length, e.g. "
            "\"192.0.2.0/24\"");
}

TEST(ConfigErrorTest, DuplicatePrefixAfterNormalisation) {
  EXPECT_EQ(error_of(R"(
[[prefix]]
cidr = "2001:db8::/32"
class = "critical"
[[prefix]]
cidr = "2001:0db8:0::/32"
class = "background"
)"),
            "edgeshed.toml:5:1: prefix[1].cidr = \"2001:0db8:0::/32\": duplicate of prefix[0]");
}

TEST(ConfigErrorTest, PrefixWithoutClass) {
  EXPECT_EQ(error_of("[[prefix]]\ncidr = \"192.0.2.0/24\"\n"),
            "edgeshed.toml:1:1: prefix[0]: missing required key \"class\"");
}

TEST(ConfigErrorTest, TooManyPrefixesOfOneFamily) {
  std::string text;
  for (int i = 0; i <= EDGESHED_MAX_PREFIXES; ++i) {
    text += "[[prefix]]\ncidr = \"10." + std::to_string(i / 256) + "." + std::to_string(i % 256) +
            ".0/24\"\nclass = \"background\"\n";
  }
  EXPECT_EQ(error_of(text),
            "edgeshed.toml:1:3: prefix = (an array): 4097 IPv4 prefixes: at most 4096 per address "
            "family");
}

// The message of the brief: a higher level's enter below the lower one's.
TEST(ConfigErrorTest, EnterThresholdsMustRise) {
  EXPECT_EQ(error_of(R"(
[levels.high]
enter = 0.5
exit = 0.4
)"),
            "edgeshed.toml:2:1: levels.high.enter = 0.5: must be > levels.elevated.enter (1.0)");
}

TEST(ConfigErrorTest, LowerEnterAboveTheDefaultUpperIsReportedWhereWritten) {
  EXPECT_EQ(error_of(R"(
[levels.elevated]
enter = 1.4
)"),
            "edgeshed.toml:2:1: levels.elevated.enter = 1.4: must be < levels.high.enter (1.3)");
}

TEST(ConfigErrorTest, ExitMustBeBelowEnter) {
  EXPECT_EQ(error_of(R"(
[levels.critical]
exit = 2.0
)"),
            "edgeshed.toml:2:1: levels.critical.exit = 2.0: must be < levels.critical.enter "
            "(2.0)");
}

TEST(ConfigErrorTest, EnterBelowDefaultExitIsReportedAtEnter) {
  EXPECT_EQ(error_of(R"(
[levels.elevated]
enter = 0.7
)"),
            "edgeshed.toml:2:1: levels.elevated.enter = 0.7: must be > levels.elevated.exit "
            "(0.8)");
}

TEST(ConfigErrorTest, ThresholdMustBePositive) {
  EXPECT_EQ(error_of("[levels.high]\nexit = 0\n"),
            "edgeshed.toml:2:1: levels.high.exit = 0: must be in (0.0, 100.0]");
}

TEST(ConfigErrorTest, ThresholdMustBeANumber) {
  EXPECT_EQ(error_of("[levels.high]\nenter = \"1.3\"\n"),
            "edgeshed.toml:2:1: levels.high.enter = \"1.3\": must be a number, must be in (0.0, "
            "100.0]");
}

TEST(ConfigErrorTest, DwellOutOfRange) {
  EXPECT_EQ(error_of("[levels]\nenter_after = 0\n"),
            "edgeshed.toml:2:1: levels.enter_after = 0: must be an integer in [1, 100]");
  EXPECT_EQ(error_of("[levels]\nexit_after = \"11m\"\n"),
            "edgeshed.toml:2:1: levels.exit_after = \"11m\": must be 0 or between 0s and 10m");
}

TEST(ConfigErrorTest, UnknownKeyInALevel) {
  EXPECT_EQ(error_of("[levels.high]\nenrer = 1.5\n"),
            "edgeshed.toml:2:1: unknown key \"levels.high.enrer\"; did you mean "
            "\"levels.high.enter\"?");
}

TEST(ConfigErrorTest, PolicyOfUnknownLevelOrClass) {
  EXPECT_EQ(error_of("[policy.severe.normal]\naction = \"shed\"\n"),
            "edgeshed.toml:1:9: unknown key \"policy.severe\"");
  EXPECT_EQ(error_of("[policy.high.bulk]\naction = \"shed\"\n"),
            "edgeshed.toml:1:14: unknown key \"policy.high.bulk\"");
}

TEST(ConfigErrorTest, PolicyWithoutAction) {
  EXPECT_EQ(error_of("[policy.high.normal]\nfraction = 0.5\n"),
            "edgeshed.toml:1:1: policy.high.normal: missing required key \"action\"\n"
            "edgeshed.toml:2:1: policy.high.normal.fraction = 0.5: only valid with action = "
            "\"fraction\"");
}

TEST(ConfigErrorTest, FractionNeedsActionFraction) {
  EXPECT_EQ(error_of("[policy.high.normal]\naction = \"cap\"\nfraction = 0.5\n"),
            "edgeshed.toml:3:1: policy.high.normal.fraction = 0.5: only valid with action = "
            "\"fraction\"");
}

TEST(ConfigErrorTest, ActionFractionNeedsFraction) {
  EXPECT_EQ(error_of("[policy.high.normal]\naction = \"fraction\"\n"),
            "edgeshed.toml:1:1: policy.high.normal: missing required key \"fraction\"");
}

TEST(ConfigErrorTest, FractionOutOfRange) {
  EXPECT_EQ(error_of("[policy.high.normal]\naction = \"fraction\"\nfraction = 1.5\n"),
            "edgeshed.toml:3:1: policy.high.normal.fraction = 1.5: must be in [0.0, 1.0]");
}

TEST(ConfigErrorTest, CapNeedsActionCapAndAPositiveValue) {
  EXPECT_EQ(error_of("[policy.high.normal]\naction = \"admit\"\ncap = 10\n"),
            "edgeshed.toml:3:1: policy.high.normal.cap = 10: only valid with action = \"cap\"");
  EXPECT_EQ(error_of("[policy.high.normal]\naction = \"cap\"\ncap = 0\n"),
            "edgeshed.toml:3:1: policy.high.normal.cap = 0: must be an integer in [1, 1000000]");
}

TEST(ConfigErrorTest, TokenBucketWithShed) {
  EXPECT_EQ(error_of("[policy.high.background]\naction = \"shed\"\ntokens_per_sec = 10\n"),
            "edgeshed.toml:3:1: policy.high.background.tokens_per_sec = 10: only valid with "
            "action = \"admit\", \"fraction\" or \"cap\"");
}

TEST(ConfigErrorTest, BurstNeedsTokensPerSec) {
  EXPECT_EQ(error_of("[policy.high.background]\naction = \"admit\"\nburst = 10\n"),
            "edgeshed.toml:3:1: policy.high.background.burst = 10: only valid with "
            "tokens_per_sec");
}

// Config validation rejects what the law would clamp, so the operator learns
// the rule instead of seeing it silently corrected.
TEST(ConfigErrorTest, SheddingCriticalIsRejected) {
  EXPECT_EQ(error_of("[policy.critical.critical]\naction = \"shed\"\n"),
            "edgeshed.toml:2:1: policy.critical.critical.action = \"shed\": would shed critical "
            "traffic below its guaranteed critical.floor_fraction (1.0); lower the floor to "
            "allow it");
}

TEST(ConfigErrorTest, CriticalFractionBelowTheFloor) {
  EXPECT_EQ(error_of(R"(
[critical]
floor_fraction = 0.5
[policy.high.critical]
action = "fraction"
fraction = 0.25
)"),
            "edgeshed.toml:5:1: policy.high.critical.fraction = 0.25: is below the guaranteed "
            "critical.floor_fraction (0.5) of critical traffic; lower the floor to allow it");
}

TEST(ConfigErrorTest, CriticalCapBelowTheFloor) {
  EXPECT_EQ(error_of("[policy.high.critical]\naction = \"cap\"\ncap = 8\n"),
            "edgeshed.toml:3:1: policy.high.critical.cap = 8: is below the guaranteed "
            "critical.floor_inflight (16) of critical traffic; lower the floor to allow it");
}

TEST(ConfigErrorTest, CriticalSectionRanges) {
  EXPECT_EQ(error_of("[critical]\nfloor_fraction = 1.1\n"),
            "edgeshed.toml:2:1: critical.floor_fraction = 1.1: must be in [0.0, 1.0]");
  EXPECT_EQ(error_of("[critical]\ncap = 10\n"),
            "edgeshed.toml:2:1: critical.cap = 10: must be >= critical.floor_inflight (16)");
}

TEST(ConfigErrorTest, UnknownLimitAlgorithm) {
  EXPECT_EQ(error_of("[limit]\nalgorithm = \"vegas\"\n"),
            "edgeshed.toml:2:1: limit.algorithm = \"vegas\": must be one of \"static\", \"aimd\", "
            "\"gradient\", \"capacity\"");
}

TEST(ConfigErrorTest, LatencySignalMustNameASignal) {
  EXPECT_EQ(error_of("[limit]\nlatency_signal = \"probe\"\n"),
            "edgeshed.toml:2:1: limit.latency_signal = \"probe\": names no configured [[signal]]");
}

TEST(ConfigTest, LatencySignalNamesTheLimitsInput) {
  auto cfg = signals::parse_config(
      "[limit]\nlatency_signal = \"probe\"\n[[signal]]\nname = \"probe\"\nkind = \"file\"\n"
      "path = \"/run/x\"\ntarget = 0.05\n",
      "edgeshed.toml");
  ASSERT_TRUE(cfg) << cfg.error().message;
  EXPECT_EQ(cfg->latency_signal, "probe");
}

TEST(ConfigTest, MaxConnectionsIsAnyAlgorithmsHardCap) {
  auto none = signals::parse_config("", "edgeshed.toml");
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_EQ(none->max_connections, 0u);
  auto cfg = signals::parse_config("[limit]\nalgorithm = \"static\"\nmax_connections = 5000\n",
                                   "edgeshed.toml");
  ASSERT_TRUE(cfg) << cfg.error().message;
  EXPECT_EQ(cfg->max_connections, 5000u);
  EXPECT_EQ(error_of("[limit]\nmax_connections = 0\n"),
            "edgeshed.toml:2:1: limit.max_connections = 0: must be an integer in [1, 1000000]");
}

TEST(ConfigTest, CapacityColdStartIsOpenUnlessCappedAtInitial) {
  auto open = signals::parse_config("", "edgeshed.toml");
  ASSERT_TRUE(open) << open.error().message;
  EXPECT_EQ(open->limit.capacity.cold_start, law::ColdStart::kOpen);
  auto capped =
      signals::parse_config("[limit]\ncold_start = \"initial\"\ninitial = 60\n", "edgeshed.toml");
  ASSERT_TRUE(capped) << capped.error().message;
  EXPECT_EQ(capped->limit.capacity.cold_start, law::ColdStart::kInitial);
  EXPECT_EQ(capped->limit.capacity.initial, 60u);
  EXPECT_EQ(error_of("[limit]\nalgorithm = \"aimd\"\ncold_start = \"open\"\n"),
            "edgeshed.toml:3:1: limit.cold_start = \"open\": only valid with algorithm = "
            "\"capacity\"");
}

TEST(ConfigErrorTest, KeyOfAnotherAlgorithm) {
  EXPECT_EQ(error_of("[limit]\nalgorithm = \"aimd\"\ntolerance = 0.3\n"),
            "edgeshed.toml:3:1: limit.tolerance = 0.3: only valid with algorithm = \"gradient\" or "
            "\"capacity\"");
  EXPECT_EQ(error_of("[limit]\nalgorithm = \"static\"\nmin = 3\n"),
            "edgeshed.toml:3:1: limit.min = 3: only valid with algorithm = \"aimd\" or "
            "\"gradient\" or \"capacity\"");
}

TEST(ConfigErrorTest, LimitMinAboveMax) {
  EXPECT_EQ(error_of("[limit]\nmin = 50\nmax = 40\ninitial = 45\n"),
            "edgeshed.toml:2:1: limit.min = 50: must be <= limit.max (40)");
}

TEST(ConfigErrorTest, LimitInitialOutsideMinMax) {
  EXPECT_EQ(error_of("[limit]\ninitial = 2000\n"),
            "edgeshed.toml:2:1: limit.initial = 2000: must be in [limit.min, limit.max] = [4, "
            "1000]");
  EXPECT_EQ(error_of("[limit]\nmin = 30\n"),
            "edgeshed.toml:2:1: limit.min = 30: must be <= limit.initial (20)");
}

TEST(ConfigErrorTest, GradientParameterRanges) {
  EXPECT_EQ(error_of("[limit]\ntolerance = 0\n"),
            "edgeshed.toml:2:1: limit.tolerance = 0: must be in (0.0, 1.0]");
  EXPECT_EQ(error_of("[limit]\nmax_increase_per_tick = 1.0\n"),
            "edgeshed.toml:2:1: limit.max_increase_per_tick = 1.0: must be in (1.0, 10.0]");
  EXPECT_EQ(error_of("[limit]\nmax_decrease_per_tick = 1.0\n"),
            "edgeshed.toml:2:1: limit.max_decrease_per_tick = 1.0: must be in (0.0, 1.0)");
}

TEST(ConfigErrorTest, AimdBackoffRange) {
  EXPECT_EQ(error_of("[limit]\nalgorithm = \"aimd\"\nbackoff = 1.0\n"),
            "edgeshed.toml:3:1: limit.backoff = 1.0: must be in (0.0, 1.0)");
}

TEST(ConfigErrorTest, SignalMissingRequiredKeys) {
  EXPECT_EQ(error_of("[[signal]]\nhard_safety = true\n"),
            "edgeshed.toml:1:1: signal[0]: missing required key \"name\"\n"
            "edgeshed.toml:1:1: signal[0]: missing required key \"kind\"\n"
            "edgeshed.toml:1:1: signal[0]: missing required key \"target\"");
}

TEST(ConfigErrorTest, SignalTargetMustBePositive) {
  EXPECT_EQ(error_of("[[signal]]\nname = \"q\"\nkind = \"inflight\"\ntarget = 0\n"),
            "edgeshed.toml:4:1: signal[0].target = 0: must be > 0.0");
}

TEST(ConfigErrorTest, SignalTargetMustBeFinite) {
  EXPECT_EQ(error_of("[[signal]]\nname = \"q\"\nkind = \"inflight\"\ntarget = inf\n"),
            "edgeshed.toml:4:1: signal[0].target = inf: must be > 0.0");
}

TEST(ConfigErrorTest, SignalOfUnknownKind) {
  EXPECT_EQ(error_of("[[signal]]\nname = \"q\"\nkind = \"cpu\"\ntarget = 1\n"),
            "edgeshed.toml:3:1: signal[0].kind = \"cpu\": must be one of \"inflight\", "
            "\"accept_queue\", \"dataplane\", \"netstat\", \"psi\", \"prometheus\", \"probe\", "
            "\"synthetic\", \"file\", \"kernel_latency\", \"limit\"");
}

TEST(ConfigErrorTest, SignalNames) {
  EXPECT_EQ(error_of("[[signal]]\nname = \"has space\"\nkind = \"synthetic\"\ntarget = 1\n"),
            "edgeshed.toml:2:1: signal[0].name = \"has space\": must be 1-64 characters of "
            "letters, digits, '_', '-' or '.'");
  EXPECT_EQ(error_of(R"(
[[signal]]
name = "q"
kind = "synthetic"
target = 1
[[signal]]
name = "q"
kind = "synthetic"
target = 2
)"),
            "edgeshed.toml:6:1: signal[1].name = \"q\": duplicate of signal[0]");
}

TEST(ConfigErrorTest, SignalStaleAfterShorterThanATick) {
  EXPECT_EQ(
      error_of(
          "[[signal]]\nname = \"q\"\nkind = \"synthetic\"\ntarget = 1\nstale_after = \"50ms\"\n"),
      "edgeshed.toml:5:1: signal[0].stale_after = \"50ms\": must be >= daemon.tick (100ms): a "
      "signal is read once per tick");
}

TEST(ConfigErrorTest, AllErrorsAreReportedAtOnce) {
  const std::string error = error_of(R"(
[daemon]
tick = "1h"
[dataplane]
mode = "on"
)");
  EXPECT_THAT(error, HasSubstr("edgeshed.toml:2:1: daemon.tick"));
  EXPECT_THAT(error, HasSubstr("\nedgeshed.toml:4:1: dataplane.mode"));
}

TEST(ConfigErrorTest, MissingFile) {
  Result<Config> config = signals::load_config("/nonexistent/edgeshed.toml");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.error().message,
            "/nonexistent/edgeshed.toml: cannot open: No such file or directory");
}

TEST(ConfigErrorTest, DirectoryIsNotAConfig) {
  Result<Config> config = signals::load_config("/");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.error().message, "/: not a regular file");
}

// --- durations and prefixes on their own

TEST(DurationTest, ParsesEveryUnit) {
  EXPECT_EQ(parse_duration("250us").value(), std::chrono::microseconds(250));
  EXPECT_EQ(parse_duration("100ms").value(), milliseconds(100));
  EXPECT_EQ(parse_duration("3s").value(), seconds(3));
  EXPECT_EQ(parse_duration("1.5s").value(), milliseconds(1500));
  EXPECT_EQ(parse_duration("1m").value(), seconds(60));
  EXPECT_EQ(parse_duration("2h").value(), std::chrono::hours(2));
  EXPECT_EQ(parse_duration("0").value(), seconds(0));
}

TEST(DurationTest, RejectsMalformed) {
  for (const char* text : {"", "s", "10", "1.s", ".5s", "10 ms", "10sec", "-1s", "1e3ms", "1ns"}) {
    EXPECT_FALSE(parse_duration(text).ok()) << text;
  }
  EXPECT_EQ(parse_duration("0.0005us").error().message, "finer than one nanosecond");
  EXPECT_EQ(parse_duration("-1s").error().message, "negative durations are not allowed");
  EXPECT_EQ(parse_duration("0.5us").value(), std::chrono::nanoseconds(500));
}

TEST(DurationTest, FormatsInTheLargestExactUnit) {
  EXPECT_EQ(format_duration(milliseconds(100)), "100ms");
  EXPECT_EQ(format_duration(seconds(120)), "2m");
  EXPECT_EQ(format_duration(milliseconds(1500)), "1500ms");
  EXPECT_EQ(format_duration(std::chrono::nanoseconds(7)), "7ns");
  EXPECT_EQ(format_duration(seconds(0)), "0s");
}

TEST(IpPrefixTest, ParsesBothFamilies) {
  const IpPrefix v4 = parse_ip_prefix("192.0.2.0/24").value();
  EXPECT_EQ(v4.family, IpFamily::kV4);
  EXPECT_EQ(v4.length, 24u);
  EXPECT_EQ(v4.address[0], 192);
  EXPECT_EQ(v4.address[2], 2);
  const IpPrefix v6 = parse_ip_prefix("2001:db8::/32").value();
  EXPECT_EQ(v6.family, IpFamily::kV6);
  EXPECT_EQ(to_string(v6), "2001:db8::/32");
  EXPECT_EQ(to_string(parse_ip_prefix("0.0.0.0/0").value()), "0.0.0.0/0");
  EXPECT_EQ(to_string(parse_ip_prefix("198.51.100.7/32").value()), "198.51.100.7/32");
}

TEST(IpPrefixTest, RejectsMalformed) {
  for (const char* text : {"192.0.2.0/", "192.0.2.0/33", "192.0.2.0/a", "192.0.2.0/-1", "::1/129",
                           "host/24", "192.0.2.0/24/1"}) {
    EXPECT_FALSE(parse_ip_prefix(text).ok()) << text;
  }
  EXPECT_EQ(parse_ip_prefix("2001:db8::1/32").error().message,
            "host bits set; did you mean \"2001:db8::/32\"?");
}

// The config reference is examples/edgeshed.toml: every key the parser or a
// signal kind reads must be documented there.
TEST(ConfigTest, ExampleDocumentsEveryKeyTheCodeReads) {
  auto read = [](const std::filesystem::path& p) {
    std::ifstream in(p);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  const auto root = std::filesystem::path(__FILE__).parent_path() / ".." / "..";
  const std::string example = read(root / "examples" / "edgeshed.toml");
  std::set<std::string> keys;
  const std::regex config_key(
      R"re(reader\.(?:duration|number|integer|boolean|string|choice)\("([a-z_]+)")re");
  // The sections are parsed in config.cpp and the parse_*.cpp files beside
  // it; a signal kind reads its keys in its own file, at parse time with
  // the config's reader or later with a ParamReader.
  const std::regex param_list(R"re(ParamReader \w+\(cfg,\s*\{([^}]*)\})re");
  const std::regex quoted(R"re("([a-z_]+)")re");
  for (const char* dir : {"config", "signals"}) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(root / "controller" / dir)) {
      if (!e.is_regular_file() || e.path().extension() != ".cpp") continue;  // signals/parse/
      const std::string src = read(e.path());
      for (auto it = std::sregex_iterator(src.begin(), src.end(), config_key);
           it != std::sregex_iterator(); ++it) {
        keys.insert((*it)[1]);
      }
      for (auto it = std::sregex_iterator(src.begin(), src.end(), param_list);
           it != std::sregex_iterator(); ++it) {
        const std::string list = (*it)[1];
        for (auto q = std::sregex_iterator(list.begin(), list.end(), quoted);
             q != std::sregex_iterator(); ++q) {
          keys.insert((*q)[1]);
        }
      }
    }
  }
  EXPECT_GE(keys.size(), 60u) << "the key extraction found too little to mean anything";
  for (const auto& key : keys) {
    const std::regex mentioned("(^|[\\s#(,])" + key + "([\\s=,:)]|$)");
    EXPECT_TRUE(std::regex_search(example, mentioned))
        << key << " is read by the code but not documented in examples/edgeshed.toml";
  }
}

TEST(ConfigTest, MetricsListenAddress) {
  auto v6 = signals::parse_config("[metrics]\nlisten = \"[::1]:9100\"\n", "m.toml");
  ASSERT_TRUE(v6) << v6.error().message;
  EXPECT_EQ(v6->metrics.listen.address, "::1");
  EXPECT_EQ(v6->metrics.listen.port, 9100);
  auto off = signals::parse_config("[metrics]\nlisten = \"off\"\n", "m.toml");
  ASSERT_TRUE(off);
  EXPECT_FALSE(off->metrics.listen.enabled);
  for (const char* bad : {"127.0.0.1", "127.0.0.1:0", "127.0.0.1:70000", "localhost:9477",
                          "127.0.0.1:94x7", ":9477"}) {
    auto r = signals::parse_config(std::string("[metrics]\nlisten = \"") + bad + "\"\n", "m.toml");
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().message.find("m.toml:2:"), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find("metrics.listen"), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find("ADDRESS:PORT"), std::string::npos) << r.error().message;
  }
  auto rel = signals::parse_config("[daemon]\nrun_dir = \"run\"\n", "m.toml");
  ASSERT_FALSE(rel);
  EXPECT_NE(rel.error().message.find("absolute path"), std::string::npos);
}

// Two daemons on one host never share what they learnt; a test's daemon
// keeps it in its own folder.
TEST(ConfigTest, TheStateDirectoryFollowsTheRunDirectoryUnlessSet) {
  auto defaults = signals::parse_config("", "m.toml");
  ASSERT_TRUE(defaults) << defaults.error().message;
  EXPECT_EQ(defaults->daemon.effective_state_dir(), "/var/lib/edgeshed");
  auto own_run = signals::parse_config("[daemon]\nrun_dir = \"/tmp/x/run\"\n", "m.toml");
  ASSERT_TRUE(own_run) << own_run.error().message;
  EXPECT_EQ(own_run->daemon.effective_state_dir(), "/tmp/x/run/state");
  auto set = signals::parse_config("[daemon]\nrun_dir = \"/tmp/x/run\"\nstate_dir = \"/srv/es\"\n",
                                   "m.toml");
  ASSERT_TRUE(set) << set.error().message;
  EXPECT_EQ(set->daemon.effective_state_dir(), "/srv/es");
  auto rel = signals::parse_config("[daemon]\nstate_dir = \"state\"\n", "m.toml");
  ASSERT_FALSE(rel);
  EXPECT_NE(rel.error().message.find("daemon.state_dir"), std::string::npos) << rel.error().message;
}

}  // namespace
}  // namespace edgeshed::config
