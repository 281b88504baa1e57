#include <gtest/gtest.h>

#include <sstream>

#include "law/types.h"

namespace edgeshed::law {
namespace {

TEST(LawTypesTest, LevelNamesRoundTrip) {
  for (Level level : kAllLevels) {
    Result<Level> parsed = names::parse<Level>(names::name_of(level));
    ASSERT_TRUE(parsed.ok()) << names::name_of(level);
    EXPECT_EQ(parsed.value(), level);
  }
  EXPECT_EQ(names::name_of(Level::kElevated), "elevated");
}

TEST(LawTypesTest, LevelValuesAreOrdered) {
  EXPECT_EQ(static_cast<int>(Level::kNormal), 0);
  EXPECT_EQ(static_cast<int>(Level::kElevated), 1);
  EXPECT_EQ(static_cast<int>(Level::kHigh), 2);
  EXPECT_EQ(static_cast<int>(Level::kCritical), 3);
}

TEST(LawTypesTest, UnknownLevelListsTheValidNames) {
  Result<Level> parsed = names::parse<Level>("hihg");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().message,
            "unknown level \"hihg\" (expected one of: normal, elevated, high, critical)");
}

TEST(LawTypesTest, ClassNamesRoundTripAndMatchTheAbi) {
  for (TrafficClass traffic_class : kAllClasses) {
    Result<TrafficClass> parsed = names::parse<TrafficClass>(names::name_of(traffic_class));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(parsed.value(), traffic_class);
  }
  EXPECT_EQ(index_of(TrafficClass::kCritical), std::size_t{EDGESHED_CLASS_CRITICAL});
  EXPECT_EQ(index_of(TrafficClass::kBackground), std::size_t{EDGESHED_CLASS_BACKGROUND});
  EXPECT_FALSE(names::parse<TrafficClass>("bulk").ok());
}

TEST(LawTypesTest, ModeNamesRoundTrip) {
  for (Mode mode : {Mode::kOff, Mode::kObserve, Mode::kEnforce}) {
    Result<Mode> parsed = names::parse<Mode>(names::name_of(mode));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(parsed.value(), mode);
  }
  EXPECT_FALSE(names::parse<Mode>("Enforce").ok());  // names are exact
}

TEST(LawTypesTest, StreamsAsName) {
  std::ostringstream out;
  out << Level::kHigh << ' ' << TrafficClass::kNormal << ' ' << Mode::kObserve;
  EXPECT_EQ(out.str(), "high normal observe");
}

}  // namespace
}  // namespace edgeshed::law
