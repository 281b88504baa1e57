// The table of signal kinds (signals/signal_kinds.cpp) is the one list of
// them: what it holds is what the config takes, builds and documents.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "common/expect_refused.h"
#include "signals/signal_kinds.h"
#include "signals/signal_set.h"

namespace edgeshed::signals {
namespace {

TEST(SignalKinds, EachKindIsComplete) {
  std::set<std::string_view> names;
  for (const SignalKindEntry& e : signal_kinds()) {
    EXPECT_TRUE(names.insert(e.name).second) << "listed twice: " << e.name;
    EXPECT_FALSE(e.kind.meaning.empty()) << e.name;
    EXPECT_NE(e.kind.check, nullptr) << e.name;
    EXPECT_NE(e.kind.make, nullptr) << e.name;
    EXPECT_EQ(find_signal_kind(e.name), &e.kind) << e.name;
  }
  EXPECT_GE(names.size(), 11u) << "kinds went missing from the table";
  EXPECT_NE(find_signal_kind("kernel_latency"), nullptr);
  EXPECT_EQ(find_signal_kind("cpu"), nullptr);
}

// The config takes every name of the table, and only those, in its order.
TEST(SignalKinds, TheConfigTakesTheTablesNames) {
  std::string listed;
  for (const SignalKindEntry& e : signal_kinds()) {
    auto cfg = parse_config("[[signal]]\nname = \"s\"\nkind = \"" + std::string(e.name) +
                                "\"\ntarget = 1\npath = \"/x\"\n",
                            "t.toml");
    // The parser keeps a kind's own keys for the kind to check (signal_params.h).
    EXPECT_TRUE(cfg) << e.name << ": " << (cfg ? "" : cfg.error().message);
    listed += (listed.empty() ? "\"" : ", \"") + std::string(e.name) + "\"";
  }
  testing::expect_refused(
      parse_config("[[signal]]\nname = \"s\"\nkind = \"cpu\"\ntarget = 1\n", "t.toml"),
      {"t.toml:3:1: signal[0].kind = \"cpu\": must be one of " + listed});
}

TEST(SignalKinds, AKindOutsideTheTableDoesNotBuild) {
  config::SignalConfig cfg;
  cfg.name = "s";
  cfg.kind = "cpu";
  cfg.source_name = "t.toml";
  cfg.path = "signal[0]";
  testing::expect_refused(SignalSet::build({cfg}, {}), {"signal[0].kind: unknown signal kind"});
}

}  // namespace
}  // namespace edgeshed::signals
