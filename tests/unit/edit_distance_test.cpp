#include "common/edit_distance.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace edgeshed
