// The state file's schema: a state survives its JSON, the JSON keeps the
// field names and order that status, the netns tests and the deploy tests
// read, and what is not the schema is refused naming the field.
#include "ipc/state.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "ipc/run_dir.h"

namespace edgeshed::ipc {
namespace {

using Json = nlohmann::ordered_json;

State full_state() {
  State s;
  s.pid = 4242;
  s.config = "/etc/edgeshed/edgeshed.toml";
  s.monotonic_ms = 123'456'789;
  s.tick_ms = 100;
  s.level = "high";
  s.level_since_ms = 123'400'000;
  s.level_pinned = true;
  s.pressure = 1.25;
  s.drivers = {"inflight", "psi"};
  s.mode = "enforce";
  s.fail_open = false;
  s.all_stale = true;
  s.adaptive_limit = 300;
  s.adaptive_limit_open = true;
  s.interfaces = {"eth0", "eth1"};
  s.signals = {
      {"inflight", "inflight", 14.0, 10.0, 1.4, 20, false, true, ""},
      {"psi", "psi", std::nullopt, 0.5, std::nullopt, std::nullopt, true, false, "no such file"},
  };
  s.latency = std::vector<PortLatencyView>{
      {"all", {12, LatencyView::Figures{4.5, 1.0, 2.0, 3.0, 1.5}}, {}},
      {"8080",
       {0, LatencyView::Figures{0.0, std::nullopt, std::nullopt, std::nullopt, std::nullopt}},
       {3, LatencyView::Figures{0.5, 0.1, 0.2, 0.3, 0.15}}},
  };
  s.classes = {
      {"critical", 1.0, std::nullopt, std::nullopt},
      {"normal", 0.5, 200, std::nullopt},
      {"background", 0.0, 10, 50},
  };
  s.runtime_changes.mode = TimedChangeView{"enforce", std::nullopt};
  s.runtime_changes.action = TimedChangeView{"rst", 30.0};
  s.runtime_changes.level = TimedChangeView{"high", 100.0};
  s.runtime_changes.classes = {
      {"normal", std::nullopt, 50, std::nullopt, std::nullopt, 12.0},
      {"background", 0.1, std::nullopt, 100, 20, std::nullopt},
  };
  s.runtime_changes.ports = {{"80", "critical"}, {"443", std::nullopt}};
  s.runtime_changes.prefixes = {{"2001:db8::/32", "background"}};
  s.metrics = "127.0.0.1:9464";
  return s;
}

TEST(IpcState, AStateSurvivesItsJson) {
  for (const auto& state : {full_state(), State{}}) {
    const Json j = to_json(state);
    auto back = parse_state(Json::parse(j.dump(1)));
    ASSERT_TRUE(back) << j.dump() << " -> " << back.error().message;
    EXPECT_EQ(*back, state) << j.dump(1);
    EXPECT_EQ(to_json(*back).dump(1), j.dump(1)) << "the same text, field order included";
  }
}

TEST(IpcState, ActiveChangesSurviveTheirJson) {
  const auto changes = full_state().runtime_changes;
  auto back = parse_active_changes(Json::parse(to_json(changes).dump()));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, changes);
  EXPECT_TRUE(to_json(ActiveChanges{}).empty());
}

// What the netns and deploy tests and status --json readers see: the names,
// their order, and nulls for what is unlimited or unmeasured.
TEST(IpcState, TheJsonHasTheFieldsStatusReads) {
  const Json j = to_json(full_state());
  std::vector<std::string> keys;
  for (const auto& [key, value] : j.items()) keys.push_back(key);
  const std::vector<std::string> fields = {"pid",
                                           "config",
                                           "monotonic_ms",
                                           "tick_ms",
                                           "level",
                                           "level_since_ms",
                                           "level_pinned",
                                           "pressure",
                                           "drivers",
                                           "mode",
                                           "fail_open",
                                           "all_stale",
                                           "adaptive_limit",
                                           "adaptive_limit_open",
                                           "interfaces",
                                           "signals",
                                           "latency",
                                           "classes",
                                           "runtime_changes",
                                           "metrics"};
  EXPECT_EQ(keys, fields);
  EXPECT_EQ(j["signals"][0].dump(),
            R"({"name":"inflight","kind":"inflight","value":14.0,"target":10.0,"pressure":1.4,)"
            R"("age_ms":20,"stale":false,"hard_safety":true})");
  EXPECT_EQ(j["signals"][1]["error"], "no such file");
  EXPECT_TRUE(j["signals"][1]["value"].is_null());
  EXPECT_EQ(j["latency"]["all"]["connection"].dump(), R"({"count":0})");
  EXPECT_EQ(j["latency"]["all"]["response"]["p99_ms"], 3.0);
  EXPECT_EQ(j["classes"]["normal"].dump(),
            R"({"admit_fraction":0.5,"inflight_cap":200,"tokens_per_sec":null})");
  EXPECT_EQ(j["runtime_changes"]["mode"].dump(), R"({"mode":"enforce","left_s":null})");
  EXPECT_EQ(j["runtime_changes"]["ports"].dump(), R"({"80":"critical","443":"removed"})");
  EXPECT_EQ(j["runtime_changes"]["classes"]["normal"].dump(),
            R"({"admit_fraction":null,"inflight_cap":50,"tokens_per_sec":null,"burst":null,)"
            R"("left_s":12.0})");
  EXPECT_FALSE(to_json(State{}).contains("latency")) << "no latency measured, no field";
  EXPECT_TRUE(to_json(State{})["metrics"].is_null());
}

TEST(IpcState, ABrokenNumberIsNull) {
  State s;
  s.pressure = std::numeric_limits<double>::quiet_NaN();
  s.signals = {{"x", "file", std::numeric_limits<double>::infinity(), 1.0, std::nullopt,
                std::nullopt, false, false, ""}};
  const Json j = to_json(s);
  EXPECT_TRUE(j["pressure"].is_null());
  EXPECT_TRUE(j["signals"][0]["value"].is_null());
}

TEST(IpcState, WhatIsNotTheSchemaIsRefusedNamingTheField) {
  const Json good = to_json(full_state());
  auto without = [&](const char* key) {
    Json j = good;
    j.erase(key);
    return j;
  };
  auto with = [&](const std::vector<std::string>& path, Json value) {
    Json j = good;
    Json* at = &j;
    for (const auto& p : path) at = &(at->is_array() ? (*at)[std::stoul(p)] : (*at)[p]);
    *at = std::move(value);
    return j;
  };
  const std::vector<std::pair<Json, std::string>> bad = {
      {Json::array(), "not a JSON object"},
      {without("pid"), "\"pid\" is missing"},
      {with({"pid"}, "4242"), "\"pid\" is not an integer"},
      {with({"tick_ms"}, 1.5), "\"tick_ms\" is not an integer"},
      {with({"level"}, nullptr), "\"level\" is not a string"},
      {with({"level_pinned"}, 1), "\"level_pinned\" is not true or false"},
      {with({"drivers"}, Json::array({1})), "\"drivers\" is not a list of strings"},
      {with({"adaptive_limit"}, -1), "\"adaptive_limit\" is out of range"},
      {with({"adaptive_limit_open"}, 1), "\"adaptive_limit_open\" is not true or false"},
      {without("signals"), "\"signals\" is not a list"},
      {with({"signals", "1", "target"}, "high"), "\"signals[1].target\" is not a number"},
      {with({"latency", "all", "response", "count"}, "many"),
       "\"latency.all.response.count\" is not an integer"},
      {without("classes"), "\"classes\" is missing"},
      {with({"classes", "normal", "inflight_cap"}, "x"),
       "\"classes.normal.inflight_cap\" is not an integer"},
      {without("runtime_changes"), "\"runtime_changes\" is missing"},
      {with({"runtime_changes", "level", "left_s"}, "soon"),
       "\"runtime_changes.level.left_s\" is not a number"},
      {with({"runtime_changes", "ports", "80"}, 5), "\"runtime_changes.ports.80\" is not a string"},
      {without("metrics"), "\"metrics\" is missing"},
  };
  for (const auto& [state, words] : bad) {
    auto r = parse_state(state);
    ASSERT_FALSE(r) << state.dump();
    EXPECT_NE(r.error().message.find(words), std::string::npos) << r.error().message;
  }
  // A daemon from before the open start writes no adaptive_limit_open.
  auto older = parse_state(without("adaptive_limit_open"));
  ASSERT_TRUE(older) << older.error().message;
  EXPECT_FALSE(older->adaptive_limit_open);
}

TEST(IpcState, WhatTheDaemonWritesTheCliReads) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("edgeshed-state-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const auto path = (dir / kStateFileName).string();
  ASSERT_TRUE(write_state_file(full_state(), path));
  EXPECT_EQ(std::filesystem::status(path).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write |
                std::filesystem::perms::group_read | std::filesystem::perms::others_read);
  std::ifstream in(path);
  auto back = parse_state(Json::parse(in));
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, full_state());
}

}  // namespace
}  // namespace edgeshed::ipc
