// What a config that names only the interface and the port gets, and the
// keys that go with protecting a service without knowing its capacity.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/config.h"
#include "config/signal_table.h"
#include "signals/signal_kinds.h"

namespace edgeshed::config {
namespace {

using ::testing::HasSubstr;

Config parsed(std::string_view text) {
  Result<Config> config = signals::parse_config(text, "edgeshed.toml");
  EXPECT_TRUE(config.ok()) << config.error().message;
  return config.ok() ? config.value() : Config{};
}

std::string error_of(std::string_view text) {
  Result<Config> config = signals::parse_config(text, "edgeshed.toml");
  return config.ok() ? std::string("accepted") : config.error().message;
}

constexpr std::string_view kPortOnly = R"(
[dataplane]
mode = "enforce"
[[interface]]
name = "eth0"
[[port]]
port = 80
)";

TEST(ConfigDefaultsTest, PortOnlyConfigGetsTheLimitSignal) {
  const Config config = parsed(kPortOnly);
  EXPECT_TRUE(config.default_signals);
  ASSERT_EQ(config.signals.size(), 1u);
  EXPECT_EQ(config.signals[0].name, "limit");
  EXPECT_EQ(config.signals[0].kind, "limit");
  EXPECT_DOUBLE_EQ(config.signals[0].target, 1.0);
  EXPECT_FALSE(config.ports[0].latency_objective.has_value());
}

TEST(ConfigDefaultsTest, ConfiguredSignalsReplaceTheDefault) {
  const Config config = parsed(std::string(kPortOnly) + R"(
[[signal]]
name = "cpu"
kind = "psi"
resource = "cpu"
target = 0.5
)");
  EXPECT_FALSE(config.default_signals);
  ASSERT_EQ(config.signals.size(), 1u);
  EXPECT_EQ(config.signals[0].name, "cpu");
}

TEST(ConfigDefaultsTest, LatencyObjectiveBecomesAKernelLatencySignal) {
  const Config config = parsed(R"(
[[port]]
port = 80
[[port]]
port = 443
latency_objective = "50ms"
)");
  ASSERT_TRUE(config.ports[1].latency_objective.has_value());
  EXPECT_EQ(*config.ports[1].latency_objective, std::chrono::milliseconds(50));
  ASSERT_EQ(config.signals.size(), 2u);
  const SignalConfig& objective = config.signals[1];
  EXPECT_EQ(objective.name, "latency_objective_443");
  EXPECT_EQ(objective.kind, "kernel_latency");
  EXPECT_DOUBLE_EQ(objective.target, 0.05);
  EXPECT_EQ(config::signal_keys(objective)["port"].value<int64_t>(), 443);
  EXPECT_EQ(config::signal_keys(objective)["statistic"].value<std::string>(), "p99");
}

TEST(ConfigDefaultsTest, LatencyObjectiveOutOfRange) {
  EXPECT_THAT(error_of("[[port]]\nport = 80\nlatency_objective = \"0ms\"\n"),
              HasSubstr("port[0].latency_objective"));
  EXPECT_THAT(error_of("[[port]]\nport = 80\nlatency_objective = \"2h\"\n"),
              HasSubstr("port[0].latency_objective"));
}

TEST(ConfigDefaultsTest, NiceRange) {
  EXPECT_EQ(parsed("[daemon]\nnice = 5\n").daemon.nice, 5);
  EXPECT_EQ(parsed("[daemon]\nnice = -20\n").daemon.nice, -20);
  EXPECT_THAT(error_of("[daemon]\nnice = -21\n"), HasSubstr("daemon.nice"));
  EXPECT_THAT(error_of("[daemon]\nnice = 20\n"), HasSubstr("must be an integer in [-20, 19]"));
  EXPECT_THAT(error_of("[daemon]\nnice = \"high\"\n"), HasSubstr("daemon.nice"));
}

TEST(ConfigDefaultsTest, KernelLatencyAndLimitAreSignalKinds) {
  const Config config = parsed(R"(
[[signal]]
name = "p90"
kind = "kernel_latency"
measure = "connection"
statistic = "p90"
port = 80
target = 0.1
[[signal]]
name = "full"
kind = "limit"
target = 1.0
)");
  ASSERT_EQ(config.signals.size(), 2u);
  EXPECT_EQ(config.signals[0].kind, "kernel_latency");
  EXPECT_EQ(config.signals[1].kind, "limit");
}

}  // namespace
}  // namespace edgeshed::config
