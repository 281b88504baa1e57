// An override of the critical class under its floor is not silently
// raised: the daemon's reply carries a warning that names the floor.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "daemon/runtime_changes_keeper.h"

namespace edgeshed::daemon {
namespace {

nlohmann::json override_reply(const nlohmann::json& request) {
  const auto path = ::testing::TempDir() + "/operator_floor_runtime.json";
  std::filesystem::remove(path);
  SystemWallClock wall;
  RuntimeChangesKeeper changes(path, wall, [](const RuntimeChanges&) {});
  changes.set_critical_floor(law::CriticalFloor{.fraction = 0.5, .inflight = 16});
  auto reply = changes.handle(request);
  std::filesystem::remove(path);
  return reply;
}

TEST(OperatorFloor, ACriticalOverrideUnderTheFloorIsAppliedWithAWarningNamingIt) {
  auto reply = override_reply({{"op", "override"}, {"class", "critical"}, {"admit_fraction", 0.0}});
  ASSERT_EQ(reply["ok"], true) << reply.dump();
  const auto warning = reply.value("warning", "");
  EXPECT_NE(warning.find("admit fraction 0 is raised to 0.5 (critical.floor_fraction)"),
            std::string::npos)
      << reply.dump();
}

TEST(OperatorFloor, ACapUnderTheFloorIsNamedToo) {
  auto reply = override_reply({{"op", "override"}, {"class", "critical"}, {"inflight_cap", 4}});
  EXPECT_NE(reply.value("warning", "").find("cap 4 is raised to 16 (critical.floor_inflight)"),
            std::string::npos)
      << reply.dump();
}

TEST(OperatorFloor, OtherClassesAndOverridesAboveTheFloorHaveNoWarning) {
  EXPECT_FALSE(override_reply({{"op", "override"}, {"class", "normal"}, {"admit_fraction", 0.0}})
                   .contains("warning"));
  EXPECT_FALSE(override_reply({{"op", "override"}, {"class", "critical"}, {"admit_fraction", 0.9}})
                   .contains("warning"));
}

}  // namespace
}  // namespace edgeshed::daemon
