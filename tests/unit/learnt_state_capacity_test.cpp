// The learnt state's "capacity" object (daemon/learnt_state.cpp's
// definition): every field of law::Knowledge survives the file, and a file
// from before the tail still loads.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <limits>
#include <string>

#include "daemon/learnt_state.h"

namespace edgeshed::daemon {
namespace {

using testing::HasSubstr;

LearntState every_field() {
  LearntState s;
  s.service.ports = {80, 443};
  s.service.listeners = {{80, 33}, {443, 0}};
  s.knowledge.floor_seconds = 0.0213;
  s.knowledge.inflight = 5;
  s.knowledge.rate = 248.5;
  s.knowledge.peak_inflight = 13;
  s.knowledge.readings = 599;
  s.knowledge.tail_seconds = 0.0871;
  s.saved_unix_ms = 1'796'000'000'000;
  return s;
}

TEST(LearntStateCapacity, EveryFieldSurvivesTheFile) {
  const auto saved = every_field();
  auto back = parse_learnt_state(to_json_text(saved));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->knowledge, saved.knowledge);
  EXPECT_EQ(back->service, saved.service);
  EXPECT_EQ(back->saved_unix_ms, saved.saved_unix_ms);
}

TEST(LearntStateCapacity, AFileWithoutTheTailLoadsWithZero) {
  auto j = nlohmann::json::parse(to_json_text(every_field()));
  ASSERT_TRUE(j["capacity"].contains("tail_seconds"));
  j["capacity"].erase("tail_seconds");
  auto older = parse_learnt_state(j.dump());
  ASSERT_TRUE(older) << older.error().message;
  EXPECT_EQ(older->knowledge.tail_seconds, 0.0);
  EXPECT_EQ(older->knowledge.readings, 599u);
}

TEST(LearntStateCapacity, ANegativeOrBrokenLatencyIsMalformed) {
  for (double bad : {-0.5, std::numeric_limits<double>::infinity()}) {
    auto s = every_field();
    s.knowledge.tail_seconds = bad;
    auto back = parse_learnt_state(to_json_text(s));
    ASSERT_FALSE(back) << bad;
    EXPECT_THAT(back.error().message, HasSubstr("malformed"));
  }
  auto j = nlohmann::json::parse(to_json_text(every_field()));
  j["capacity"]["tail_seconds"] = "soon";
  auto back = parse_learnt_state(j.dump());
  ASSERT_FALSE(back);
  EXPECT_THAT(back.error().message, HasSubstr("\"capacity.tail_seconds\" is not a number"));
}

}  // namespace
}  // namespace edgeshed::daemon
