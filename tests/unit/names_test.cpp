// The name tables of common/names.h and the derived counts of common/stats.h.
#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/names.h"
#include "common/stats.h"
#include "config/config.h"
#include "law/types.h"

namespace edgeshed {
namespace {

// Every value of the table has a non-empty name of its own, and the name
// finds the value again.
template <std::size_t N>
void expect_distinct_round_trip(const std::array<std::string_view, N>& table,
                                std::string_view what) {
  std::set<std::string_view> seen;
  for (std::size_t i = 0; i < N; ++i) {
    SCOPED_TRACE(std::string(what) + "[" + std::to_string(i) + "]");
    EXPECT_FALSE(table[i].empty());
    EXPECT_NE(table[i], "unknown");
    EXPECT_TRUE(seen.insert(table[i]).second) << "duplicate name " << table[i];
    EXPECT_EQ(names::find(table, table[i]), std::optional<uint32_t>(i));
    EXPECT_EQ(names::name_of(table, i), table[i]);
  }
  EXPECT_EQ(names::name_of(table, N), "unknown");
  EXPECT_EQ(names::find(table, "no such name"), std::nullopt);
}

TEST(NamesTest, EveryTableHasDistinctNamesThatRoundTrip) {
  expect_distinct_round_trip(names::kClasses, "classes");
  expect_distinct_round_trip(names::kModes, "modes");
  expect_distinct_round_trip(names::kActions, "actions");
  expect_distinct_round_trip(names::kDraws, "draws");
  expect_distinct_round_trip(names::kHooks, "hooks");
  expect_distinct_round_trip(names::kReasons, "reasons");
  expect_distinct_round_trip(names::kOutcomes, "outcomes");
  expect_distinct_round_trip(names::kCounters, "counters");
  expect_distinct_round_trip(names::kGlobalCounters, "global counters");
  expect_distinct_round_trip(names::kLevels, "levels");
  expect_distinct_round_trip(names::kVerdicts, "verdicts");
  expect_distinct_round_trip(names::kAllStale, "all_stale");
  expect_distinct_round_trip(names::kOnExit, "on_exit");
  expect_distinct_round_trip(names::kLogLevels, "log levels");
}

TEST(NamesTest, TablesAreIndexedByTheAbiValues) {
  EXPECT_EQ(names::kClasses[EDGESHED_CLASS_BACKGROUND], "background");
  EXPECT_EQ(names::kModes[EDGESHED_MODE_ENFORCE], "enforce");
  EXPECT_EQ(names::kActions[EDGESHED_ACTION_RST], "rst");
  EXPECT_EQ(names::kDraws[EDGESHED_DRAW_RANDOM], "random");
  EXPECT_EQ(names::kHooks[EDGESHED_HOOK_XDP_GENERIC], "xdp-generic");
  EXPECT_EQ(names::kReasons[EDGESHED_REASON_FRAC], "fraction");
  EXPECT_EQ(names::kOutcomes[EDGESHED_EVENT_WOULD_SHED], "would_shed");
  EXPECT_EQ(names::kCounters[EDGESHED_CTR_RST_CAPPED], "rst_capped");
  EXPECT_EQ(names::kGlobalCounters[EDGESHED_GCTR_RST_NOT_UNICAST], "rst_not_unicast");
  EXPECT_EQ(names::find(names::kHooks, "none", EDGESHED_HOOK_XDP), std::nullopt);
  EXPECT_EQ(names::find(names::kHooks, "tc", EDGESHED_HOOK_XDP),
            std::optional<uint32_t>(EDGESHED_HOOK_TC));
}

// The law and the config name their enums by the same tables.
TEST(NamesTest, LawAndConfigUseTheTables) {
  for (law::Level level : law::kAllLevels) {
    EXPECT_EQ(names::name_of(level), names::kLevels[law::index_of(level)]);
  }
  for (law::TrafficClass traffic_class : law::kAllClasses) {
    EXPECT_EQ(names::name_of(traffic_class), names::kClasses[law::index_of(traffic_class)]);
  }
  EXPECT_EQ(names::name_of(law::Mode::kObserve), "observe");
  EXPECT_EQ(names::name_of(config::Action::kDrop), "drop");
  EXPECT_EQ(names::name_of(config::Draw::kSourceHash), "source_hash");
  EXPECT_EQ(names::name_of(config::Hook::kXdpGeneric), "xdp-generic");
  EXPECT_EQ(names::name_of(config::OnExit::kDetach), "detach");
  EXPECT_EQ(names::name_of(names::Verdict::kWouldShed), "would_shed");
  EXPECT_EQ(names::name_of(law::AllStalePolicy::kFailOpen), "fail_open");
}

// The typed API reads a bound enum's table from its first readable value on.
TEST(NamesTest, TypedParseFindAndValues) {
  EXPECT_EQ(names::find<config::Hook>("tc"), config::Hook::kTc);
  EXPECT_EQ(names::find<config::Hook>("none"), std::nullopt);  // never written in a config
  EXPECT_EQ(names::parse<config::Hook>("none").error().message,
            "unknown hook \"none\" (expected one of: xdp, xdp-generic, tc)");
  EXPECT_EQ(names::parse<config::Action>("rst").value(), config::Action::kRst);
  EXPECT_EQ(names::all_values<config::Hook>().size(), 3u);
  EXPECT_EQ(names::all_values<config::Hook>().front(), config::Hook::kXdp);
  EXPECT_EQ(names::one_of(names::kActions), "drop or rst");
  EXPECT_EQ(names::one_of(names::kHooks, names::kFirstHook), "xdp, xdp-generic or tc");
}

// The comment above a choice's first `key = ` line in examples/edgeshed.toml.
std::string example_comment_of(std::string_view key) {
  const auto root = std::filesystem::path(__FILE__).parent_path() / ".." / "..";
  std::ifstream in(root / "examples" / "edgeshed.toml");
  std::string comment;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(std::string(key) + " = ", 0) == 0) return comment;
    comment = line.rfind('#', 0) == 0 ? comment + line + "\n" : "";
  }
  return "";
}

// A name added to a table the config reads is a test failure until the
// example documents it.
TEST(NamesTest, ExampleDocumentsEveryChoice) {
  struct Choice {
    std::string_view key;
    std::vector<std::string> names;
  };
  const Choice choices[] = {
      {"on_exit", names::all_names(names::kOnExit)},
      {"all_stale", names::all_names(names::kAllStale)},
      {"log_level", names::all_names(names::kLogLevels)},
      {"not_ready_from", names::all_names(names::kLevels, 1)},
      {"mode", names::all_names(names::kModes)},
      {"action", names::all_names(names::kActions)},
      {"draw", names::all_names(names::kDraws)},
      {"hook", names::all_names(names::kHooks, names::kFirstHook)},
      {"keepalive", names::all_names(names::kKeepAlive)},
      {"algorithm", names::all_names(names::kLimitAlgorithms)},
      {"cold_start", names::all_names(names::kColdStarts)},
  };
  for (const Choice& choice : choices) {
    const std::string comment = example_comment_of(choice.key);
    ASSERT_FALSE(comment.empty()) << choice.key;
    for (const std::string& name : choice.names) {
      EXPECT_NE(comment.find("\"" + name + "\""), std::string::npos)
          << choice.key << " = \"" << name << "\" is not documented above it:\n"
          << comment;
    }
  }
}

TEST(StatsTest, ClassShedsSumEveryShedReasonAndNothingElse) {
  edgeshed_stats stats{};
  // Every counter of the class holds a distinct power of two, so the sum
  // shows exactly which counters were added.
  for (int i = 0; i < EDGESHED_NUM_COUNTERS; ++i) stats.cls[EDGESHED_CLASS_NORMAL][i] = 1ull << i;
  stats.cls[EDGESHED_CLASS_CRITICAL][EDGESHED_CTR_SHED_CAP] = 1000;  // another class

  const ClassCounters& normal = stats.cls[EDGESHED_CLASS_NORMAL];
  EXPECT_EQ(class_sheds(normal), (1ull << EDGESHED_CTR_SHED_CAP) +
                                     (1ull << EDGESHED_CTR_SHED_FRAC) +
                                     (1ull << EDGESHED_CTR_SHED_RATE));
  EXPECT_EQ(class_would_sheds(normal), (1ull << EDGESHED_CTR_WOULD_SHED_CAP) +
                                           (1ull << EDGESHED_CTR_WOULD_SHED_FRAC) +
                                           (1ull << EDGESHED_CTR_WOULD_SHED_RATE));
  EXPECT_EQ(class_sheds(stats.cls[EDGESHED_CLASS_CRITICAL]), 1000u);
  EXPECT_EQ(class_sheds(stats.cls[EDGESHED_CLASS_BACKGROUND]), 0u);
}

}  // namespace
}  // namespace edgeshed
