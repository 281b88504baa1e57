// The readiness rule of GET /ready, from the snapshot the tick thread publishes.
#include "daemon/readiness.h"

#include <gtest/gtest.h>

namespace edgeshed::daemon {
namespace {

MetricsSnapshot at(law::Level level) {
  MetricsSnapshot s;
  s.level = level;
  return s;
}

TEST(Readiness, ReadyBelowTheLevelNotReadyFromIt) {
  for (law::Level level : law::kAllLevels) {
    const MetricsSnapshot s = at(level);
    const ReadyAnswer a = ready_answer(&s, law::Level::kCritical);
    if (level == law::Level::kCritical) {
      EXPECT_EQ(a.status, 503);
      EXPECT_EQ(a.body, "not ready: critical\n");
    } else {
      EXPECT_EQ(a.status, 200) << level;
      EXPECT_EQ(a.body, "ready\n");
    }
  }
  const MetricsSnapshot elevated = at(law::Level::kElevated);
  const MetricsSnapshot high = at(law::Level::kHigh);
  EXPECT_EQ(ready_answer(&elevated, law::Level::kHigh).status, 200);
  const ReadyAnswer not_ready = ready_answer(&high, law::Level::kHigh);
  EXPECT_EQ(not_ready.status, 503);
  EXPECT_EQ(not_ready.body, "not ready: high\n");
}

TEST(Readiness, NotReadyBeforeTheFirstTick) {
  const ReadyAnswer a = ready_answer(nullptr, law::Level::kCritical);
  EXPECT_EQ(a.status, 503);
  EXPECT_EQ(a.body, "not ready: no tick yet\n");
}

}  // namespace
}  // namespace edgeshed::daemon
