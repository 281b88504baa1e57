// The name tables of common/names.h and the derived counts of common/stats.h.
#include <gtest/gtest.h>

#include <array>
#include <set>
#include <string>
#include <string_view>

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
    EXPECT_EQ(law::to_string(level), names::kLevels[law::index_of(level)]);
  }
  for (law::TrafficClass traffic_class : law::kAllClasses) {
    EXPECT_EQ(law::to_string(traffic_class), names::kClasses[law::index_of(traffic_class)]);
  }
  EXPECT_EQ(law::to_string(law::Mode::kObserve), "observe");
  EXPECT_EQ(config::to_string(config::Action::kDrop), "drop");
  EXPECT_EQ(config::to_string(config::Draw::kSourceHash), "source_hash");
  EXPECT_EQ(config::to_string(config::Hook::kXdpGeneric), "xdp-generic");
  EXPECT_EQ(config::to_string(config::OnExit::kDetach), "detach");
  EXPECT_EQ(names::name_of(names::Verdict::kWouldShed), "would_shed");
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
