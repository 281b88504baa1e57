// The load balancer's feedback keys: [agent] (the HAProxy agent-check
// responder) and [metrics] not_ready_from (GET /ready).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <string>
#include <string_view>

#include "config/config.h"
#include "signals/signal_kinds.h"

namespace edgeshed::config {
namespace {

using ::testing::HasSubstr;

Result<Config> parse(std::string_view text) {
  // Documents start with a newline after R"( so that line 1 is the first written.
  if (text.substr(0, 1) == "\n") text.remove_prefix(1);
  return signals::parse_config(text, "edgeshed.toml");
}

std::string error_of(std::string_view text) {
  Result<Config> config = parse(text);
  return config.ok() ? std::string("accepted") : config.error().message;
}

TEST(ConfigAgentTest, OffByDefaultWithFallingWeights) {
  Result<Config> config = parse("");
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_FALSE(config->agent.listen.enabled);
  EXPECT_EQ(config->agent.reply.weight_percent, (std::array<uint32_t, 4>{100, 60, 25, 0}));
  EXPECT_TRUE(config->agent.reply.send_maxconn);
  EXPECT_EQ(config->metrics.not_ready_from, law::Level::kCritical);
}

TEST(ConfigAgentTest, ReadsEveryKey) {
  Result<Config> config = parse(R"(
[metrics]
not_ready_from = "high"
[agent]
listen = "192.0.2.10:9478"
weights = { normal = 100, elevated = 80, high = 40, critical = 0 }
send_maxconn = false
)");
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_TRUE(config->agent.listen.enabled);
  EXPECT_EQ(config->agent.listen.address, "192.0.2.10");
  EXPECT_EQ(config->agent.listen.port, 9478);
  EXPECT_EQ(config->agent.reply.weight_percent, (std::array<uint32_t, 4>{100, 80, 40, 0}));
  EXPECT_FALSE(config->agent.reply.send_maxconn);
  EXPECT_EQ(config->metrics.not_ready_from, law::Level::kHigh);
}

TEST(ConfigAgentTest, ListenTakesIpv6AndOff) {
  Result<Config> v6 = parse("[agent]\nlisten = \"[2001:db8::10]:9478\"\n");
  ASSERT_TRUE(v6) << v6.error().message;
  EXPECT_TRUE(v6->agent.listen.enabled);
  EXPECT_EQ(v6->agent.listen.address, "2001:db8::10");
  EXPECT_EQ(v6->agent.listen.port, 9478);
  Result<Config> off = parse("[agent]\nlisten = \"off\"\n");
  ASSERT_TRUE(off) << off.error().message;
  EXPECT_FALSE(off->agent.listen.enabled);
}

TEST(ConfigAgentTest, WeightsAsASubTableKeepTheDefaultsOfLevelsLeftOut) {
  Result<Config> config = parse(R"(
[agent.weights]
elevated = 50
)");
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->agent.reply.weight_percent, (std::array<uint32_t, 4>{100, 50, 25, 0}));
}

TEST(ConfigAgentTest, BadListenIsLocated) {
  for (const char* bad : {"192.0.2.10", "192.0.2.10:0", "haproxy-agent:9478", "[::1]:99999"}) {
    EXPECT_THAT(error_of(std::string("[agent]\nlisten = \"") + bad + "\"\n"),
                HasSubstr("edgeshed.toml:2:1: agent.listen = \"" + std::string(bad) +
                          "\": must be \"ADDRESS:PORT\" (e.g. \"127.0.0.1:9478\""))
        << bad;
  }
}

TEST(ConfigAgentTest, WeightOutOfRangeIsLocated) {
  EXPECT_EQ(error_of(R"(
[agent]
weights = { normal = 100, elevated = 101 }
)"),
            "edgeshed.toml:2:27: agent.weights.elevated = 101: must be an integer in [0, 100]");
}

TEST(ConfigAgentTest, WeightRisingWithTheLevelIsLocatedAtTheKeyWritten) {
  EXPECT_EQ(error_of(R"(
[agent]
weights = { elevated = 60, high = 70 }
)"),
            "edgeshed.toml:2:28: agent.weights.high = 70: must be <= agent.weights.elevated (60)");
  // Only the lower level written: the error is at it, naming the default above.
  EXPECT_EQ(error_of(R"(
[agent]
weights = { normal = 20 }
)"),
            "edgeshed.toml:2:13: agent.weights.normal = 20: must be >= agent.weights.elevated "
            "(60)");
}

TEST(ConfigAgentTest, UnknownKeysAreRefused) {
  EXPECT_THAT(
      error_of("[agent]\nweights = { hihg = 10 }\n"),
      HasSubstr("unknown key \"agent.weights.hihg\"; did you mean \"agent.weights.high\"?"));
  EXPECT_THAT(error_of("[agent]\nmaxconn = true\n"), HasSubstr("unknown key \"agent.maxconn\""));
}

TEST(ConfigAgentTest, NotReadyFromIsALevelAboveNormal) {
  EXPECT_EQ(error_of("[metrics]\nnot_ready_from = \"normal\"\n"),
            "edgeshed.toml:2:1: metrics.not_ready_from = \"normal\": must be one of "
            "\"elevated\", \"high\", \"critical\"");
}

TEST(ConfigAgentTest, ExampleFileKeepsTheAgentOffWithTheDefaults) {
  const auto example =
      std::filesystem::path(__FILE__).parent_path() / ".." / ".." / "examples" / "edgeshed.toml";
  Result<Config> config = signals::load_config(example.string());
  ASSERT_TRUE(config) << config.error().message;
  const AgentConfig defaults;
  EXPECT_FALSE(config->agent.listen.enabled);
  EXPECT_EQ(config->agent.reply.weight_percent, defaults.reply.weight_percent);
  EXPECT_EQ(config->agent.reply.send_maxconn, defaults.reply.send_maxconn);
  EXPECT_EQ(config->metrics.not_ready_from, MetricsConfig{}.not_ready_from);
}

}  // namespace
}  // namespace edgeshed::config
