// loadgen's command line: what each combination of options plans, and the
// usage errors (exit code 2).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tools/loadgen_options.h"

namespace edgeshed::loadgen {
namespace {

ParseOutcome parse(std::vector<const char*> args) {
  args.insert(args.begin(), "loadgen");
  return parse_args(static_cast<int>(args.size()), args.data());
}

TEST(LoadgenArgs, RateWithCount) {
  auto r = parse({"--target", "198.51.100.1", "--rate", "800", "--count", "2000"});
  ASSERT_TRUE(r.options) << r.message;
  const Options& o = *r.options;
  EXPECT_EQ(o.family, AF_INET);
  EXPECT_EQ(o.port, 80);
  EXPECT_EQ(o.schedule, "rate");
  ASSERT_EQ(o.phases.size(), 1u);
  EXPECT_DOUBLE_EQ(o.phases[0].rate, 800);
  EXPECT_DOUBLE_EQ(o.window_s, 10);
  EXPECT_EQ(o.count, 2000u);
  EXPECT_EQ(o.timeout_ms, 2000);
  ASSERT_EQ(o.classes.size(), 1u);
  EXPECT_EQ(o.classes[0].name, "normal");
  EXPECT_EQ(o.classes[0].port, 80);
  EXPECT_DOUBLE_EQ(o.classes[0].share, 1);
  EXPECT_TRUE(o.warnings.empty());
}

TEST(LoadgenArgs, CountBeyondTheDefaultDurationWarns) {
  auto r = parse({"--target", "2001:db8::1", "--rate", "100", "--count", "2000"});
  ASSERT_TRUE(r.options) << r.message;
  EXPECT_EQ(r.options->family, AF_INET6);
  ASSERT_EQ(r.options->warnings.size(), 1u);
  EXPECT_NE(r.options->warnings[0].find("10 s"), std::string::npos);
}

TEST(LoadgenArgs, ClassesByPortSourceAndMix) {
  auto r = parse({"--target", "198.51.100.1", "--rate", "100", "--class-port", "critical=443",
                  "--class-port", "background=8080", "--class-source", "critical=198.51.100.3",
                  "--class-mix", "critical=0.1,normal=0.6,background=0.3", "--source",
                  "198.51.100.2,198.51.100.4"});
  ASSERT_TRUE(r.options) << r.message;
  const auto& c = r.options->classes;
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].name, "critical");
  EXPECT_EQ(c[0].port, 443);
  EXPECT_EQ(c[0].source, "198.51.100.3");
  EXPECT_DOUBLE_EQ(c[0].share, 0.1);
  EXPECT_EQ(c[1].name, "normal");
  EXPECT_EQ(c[1].port, 80);
  EXPECT_EQ(c[1].source, "");
  EXPECT_EQ(c[2].port, 8080);
  EXPECT_EQ(r.options->sources.size(), 2u);
}

TEST(LoadgenArgs, WithoutMixClassesShareEqually) {
  auto r = parse({"--target", "198.51.100.1", "--rate", "100", "--class-port", "critical=443"});
  ASSERT_TRUE(r.options) << r.message;
  ASSERT_EQ(r.options->classes.size(), 2u);
  EXPECT_EQ(r.options->classes[0].name, "normal");
  EXPECT_DOUBLE_EQ(r.options->classes[0].share, 0.5);
  EXPECT_DOUBLE_EQ(r.options->classes[1].share, 0.5);
}

TEST(LoadgenArgs, RampWithCapacity) {
  auto r = parse({"--target", "198.51.100.1", "--ramp", "0.5x:5s,3x:10s,0.5x:10s", "--capacity",
                  "500", "--poisson"});
  ASSERT_TRUE(r.options) << r.message;
  EXPECT_EQ(r.options->schedule, "ramp");
  EXPECT_TRUE(r.options->poisson);
  EXPECT_DOUBLE_EQ(r.options->window_s, 25);
  EXPECT_DOUBLE_EQ(r.options->phases[1].rate, 1500);
  // An explicit --duration-s cuts the ramp short.
  auto cut = parse({"--target", "198.51.100.1", "--ramp", "100:5s,200:5s", "--duration-s", "7"});
  ASSERT_TRUE(cut.options) << cut.message;
  EXPECT_DOUBLE_EQ(cut.options->window_s, 7);
}

TEST(LoadgenArgs, BurstIsItsOwnCount) {
  auto r = parse({"--target", "198.51.100.1", "--burst", "300", "--keep-alive"});
  ASSERT_TRUE(r.options) << r.message;
  EXPECT_EQ(r.options->schedule, "burst");
  EXPECT_EQ(r.options->count, 300u);
  EXPECT_TRUE(r.options->keep_alive);
  EXPECT_TRUE(r.options->phases.empty());
}

TEST(LoadgenArgs, UsageErrorsExitTwo) {
  const std::vector<std::vector<const char*>> bad = {
      {"--rate", "100"},                                            // no target
      {"--target", "example.com", "--rate", "100"},                 // not an address
      {"--target", "198.51.100.1"},                                 // no schedule
      {"--target", "198.51.100.1", "--rate", "1", "--burst", "5"},  // two schedules
      {"--target", "198.51.100.1", "--rate", "0"},
      {"--target", "198.51.100.1", "--ramp", "2x:5s"},  // no capacity
      {"--target", "198.51.100.1", "--burst", "5", "--poisson"},
      {"--target", "198.51.100.1", "--rate", "1", "--class-port", "critical=70000"},
      {"--target", "198.51.100.1", "--rate", "1", "--class-port", "critical=443", "--class-mix",
       "normal=1"},  // critical without a share
      {"--target", "198.51.100.1", "--rate", "1", "--source", "2001:db8::2"},  // family
      {"--target", "198.51.100.1", "--rate", "1", "--timeout-ms", "0"},
      {"--target", "198.51.100.1", "--rate", "1", "--bogus"},
  };
  for (const auto& args : bad) {
    auto r = parse(args);
    EXPECT_FALSE(r.options) << args.size();
    EXPECT_EQ(r.exit_code, 2) << r.message;
    EXPECT_FALSE(r.message.empty());
  }
}

TEST(LoadgenArgs, HelpExitsZero) {
  auto r = parse({"--help"});
  EXPECT_FALSE(r.options);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.message.find("--class-mix"), std::string::npos);
}

}  // namespace
}  // namespace edgeshed::loadgen
