#include "common/edit_distance.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace edgeshed {
namespace {

TEST(EditDistanceTest, CountsInsertionsDeletionsAndSubstitutions) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("tick", "tick"), 0u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("ListenDrops", "ListenDrop"), 1u);  // a deletion
  EXPECT_EQ(edit_distance("tick", "ticks"), 1u);              // an insertion
  EXPECT_EQ(edit_distance("target", "targat"), 1u);           // a substitution
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
}

TEST(EditDistanceTest, IsSymmetric) {
  EXPECT_EQ(edit_distance("SyncookiesSent", "SyncookieSend"),
            edit_distance("SyncookieSend", "SyncookiesSent"));
}

TEST(ClosestNameTest, OffersTheNearestNearMiss) {
  const std::vector<std::string> names{"ListenOverflows", "ListenDrops", "ListenDrop"};
  const std::string* closest = closest_name("ListenDropz", names);
  ASSERT_NE(closest, nullptr);
  EXPECT_EQ(*closest, "ListenDrops");
  EXPECT_EQ(closest_name("Syncookies", names), nullptr);
}

TEST(ClosestNameTest, NamesTheLengthGapRulesOutAreNoNearMiss) {
  // A gap of 2 is within a bound of 3, a gap of 3 is not; a nearer name
  // found later narrows the bound for the names after it.
  const std::vector<std::string> two_longer{"abcd"}, three_longer{"abcde"};
  ASSERT_NE(closest_name("ab", two_longer), nullptr);
  EXPECT_EQ(closest_name("ab", three_longer), nullptr);
  const std::vector<std::string> names{"abxx", "abx", "abyy"};
  ASSERT_NE(closest_name("ab", names), nullptr);
  EXPECT_EQ(*closest_name("ab", names), "abx");
  EXPECT_EQ(closest_name(std::string(200, 'k'), names), nullptr);
}

}  // namespace
}  // namespace edgeshed
