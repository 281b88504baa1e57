// The state file is rewritten the tick a decision changes, and otherwise at
// most once a refresh interval.
#include "daemon/state_refresh.h"

#include <gtest/gtest.h>

namespace edgeshed::daemon {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kTick{100};

ipc::State running() {
  ipc::State s;
  s.pid = 42;
  s.level = "normal";
  s.mode = "enforce";
  s.adaptive_limit = 20;
  s.pressure = 0.1;
  ipc::SignalView cpu;
  cpu.name = "cpu";
  cpu.kind = "psi";
  cpu.value = 0.5;
  s.signals.push_back(cpu);
  return s;
}

TEST(StateRefresh, TheFirstStateIsWritten) {
  StateRefresh r;
  EXPECT_TRUE(r.due(running(), milliseconds(0), kTick));
}

TEST(StateRefresh, WhatMovesEveryTickWaitsForTheRefresh) {
  StateRefresh r;
  r.written(running(), milliseconds(0));
  ipc::State later = running();
  later.monotonic_ms = 900;
  later.pressure = 0.4;
  later.drivers = {"cpu"};
  later.signals.front().value = 0.9;
  EXPECT_FALSE(r.due(later, milliseconds(900), kTick));
  EXPECT_TRUE(r.due(later, kStateRefresh, kTick));
}

TEST(StateRefresh, WrittenKeepsWhatDueSettled) {
  StateRefresh r;
  ASSERT_TRUE(r.due(running(), milliseconds(0), kTick));
  r.written(running(), milliseconds(0));
  ipc::State later = running();
  later.monotonic_ms = 900;
  later.signals.front().value = 0.9;
  EXPECT_FALSE(r.due(later, milliseconds(900), kTick));
  later.level = "high";
  EXPECT_TRUE(r.due(later, milliseconds(900), kTick));
}

TEST(StateRefresh, ADecisionChangeIsWrittenTheSameTick) {
  StateRefresh r;
  r.written(running(), milliseconds(0));
  ipc::State s = running();
  s.level = "high";
  EXPECT_TRUE(r.due(s, milliseconds(100), kTick));
  s = running();
  s.adaptive_limit = 12;
  EXPECT_TRUE(r.due(s, milliseconds(100), kTick));
  s = running();
  ipc::ClassPolicyView normal;
  normal.name = "normal";
  normal.admit_fraction = 0.5;
  s.classes.push_back(normal);
  EXPECT_TRUE(r.due(s, milliseconds(100), kTick));
  s = running();
  s.runtime_changes.level = ipc::TimedChangeView{"high", 60.0};
  EXPECT_TRUE(r.due(s, milliseconds(100), kTick));
}

TEST(StateRefresh, TheTimeLeftOnAChangeIsNoChange) {
  StateRefresh r;
  ipc::State s = running();
  s.runtime_changes.level = ipc::TimedChangeView{"high", 60.0};
  r.written(s, milliseconds(0));
  s.runtime_changes.level->left_s = 59.9;
  EXPECT_FALSE(r.due(s, milliseconds(100), kTick));
}

TEST(StateRefresh, ATickSlowerThanTheRefreshWritesEveryTick) {
  StateRefresh r;
  r.written(running(), milliseconds(0));
  const milliseconds slow_tick(5000);
  EXPECT_FALSE(r.due(running(), milliseconds(4000), slow_tick));
  EXPECT_TRUE(r.due(running(), slow_tick, slow_tick));
}

}  // namespace
}  // namespace edgeshed::daemon
