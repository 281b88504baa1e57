#include <gtest/gtest.h>

#include "law/policy.h"

namespace edgeshed::law {
namespace {

constexpr uint32_t kLimit = 37;

ClassPolicy at(const PolicyTable& table, Level level, TrafficClass traffic_class,
               const CriticalFloor& floor = CriticalFloor{}) {
  return resolve_policies(table, level, kLimit, floor)[index_of(traffic_class)];
}

ClassPolicy admit() { return ClassPolicy{}; }
ClassPolicy fraction(double f) {
  ClassPolicy p;
  p.admit_fraction = f;
  return p;
}
ClassPolicy shed() { return fraction(0.0); }
ClassPolicy capped(uint32_t cap) {
  ClassPolicy p;
  p.inflight_cap = cap;
  return p;
}

TEST(DefaultPolicyTest, NormalAdmitsAll) {
  const PolicyTable table = default_policy_table();
  for (TrafficClass c : kAllClasses) EXPECT_EQ(at(table, Level::kNormal, c), admit()) << c;
}

TEST(DefaultPolicyTest, ElevatedHalvesBackgroundOnly) {
  const PolicyTable table = default_policy_table();
  EXPECT_EQ(at(table, Level::kElevated, TrafficClass::kBackground), fraction(0.5));
  EXPECT_EQ(at(table, Level::kElevated, TrafficClass::kNormal), admit());
  EXPECT_EQ(at(table, Level::kElevated, TrafficClass::kCritical), admit());
}

TEST(DefaultPolicyTest, HighShedsBackgroundAndCapsNormalAtTheAdaptiveLimit) {
  const PolicyTable table = default_policy_table();
  EXPECT_EQ(at(table, Level::kHigh, TrafficClass::kBackground), shed());
  EXPECT_EQ(at(table, Level::kHigh, TrafficClass::kNormal), capped(kLimit));
  EXPECT_EQ(at(table, Level::kHigh, TrafficClass::kCritical), admit());
}

TEST(DefaultPolicyTest, CriticalShedsAllButCriticalWhichIsCappedAtItsOwnCap) {
  const PolicyTable unlimited = default_policy_table();
  EXPECT_EQ(at(unlimited, Level::kCritical, TrafficClass::kBackground), shed());
  EXPECT_EQ(at(unlimited, Level::kCritical, TrafficClass::kNormal), shed());
  EXPECT_EQ(at(unlimited, Level::kCritical, TrafficClass::kCritical), admit());

  const PolicyTable with_cap = default_policy_table(200);
  EXPECT_EQ(at(with_cap, Level::kCritical, TrafficClass::kCritical), capped(200));
}

TEST(ResolveRuleTest, EachAction) {
  EXPECT_EQ(resolve_rule(PolicyRule::admit_all(), kLimit), admit());
  EXPECT_EQ(resolve_rule(PolicyRule::admit_fraction(0.25), kLimit), fraction(0.25));
  EXPECT_EQ(resolve_rule(PolicyRule::cap_adaptive(), kLimit), capped(kLimit));
  EXPECT_EQ(resolve_rule(PolicyRule::cap_fixed(8), kLimit), capped(8));
  EXPECT_EQ(resolve_rule(PolicyRule::shed_all(), kLimit), shed());
}

TEST(ResolveRuleTest, TokenBucketIsCarriedExceptWhenShedding) {
  PolicyRule rule = PolicyRule::cap_adaptive();
  rule.tokens_per_sec = 100;
  rule.burst = 20;
  const ClassPolicy policy = resolve_rule(rule, kLimit);
  EXPECT_EQ(policy.tokens_per_sec, 100u);
  EXPECT_EQ(policy.burst, 20u);

  rule.action = PolicyAction::kShed;
  EXPECT_EQ(resolve_rule(rule, kLimit), shed());
}

TEST(ResolveRuleTest, FractionIsClampedToZeroOne) {
  EXPECT_EQ(resolve_rule(PolicyRule::admit_fraction(1.5), kLimit), fraction(1.0));
  EXPECT_EQ(resolve_rule(PolicyRule::admit_fraction(-1.0), kLimit), fraction(0.0));
}

// A policy table that tries to shed critical traffic is clamped to the floor.
TEST(CriticalFloorTest, ShedCriticalIsClampedToTheFloor) {
  PolicyTable table = default_policy_table();
  table.at(Level::kHigh, TrafficClass::kCritical) = PolicyRule::shed_all();
  EXPECT_EQ(at(table, Level::kHigh, TrafficClass::kCritical).admit_fraction, 1.0);

  CriticalFloor half;
  half.fraction = 0.5;
  EXPECT_EQ(at(table, Level::kHigh, TrafficClass::kCritical, half).admit_fraction, 0.5);
}

TEST(CriticalFloorTest, LowCriticalCapIsRaisedToTheFloor) {
  PolicyTable table = default_policy_table(/*critical_cap=*/3);
  EXPECT_EQ(at(table, Level::kCritical, TrafficClass::kCritical).inflight_cap, 16u);

  table.at(Level::kHigh, TrafficClass::kCritical) = PolicyRule::cap_adaptive();
  const ClassPolicy policy = resolve_policies(table, Level::kHigh, /*adaptive_limit=*/4,
                                              {})[index_of(TrafficClass::kCritical)];
  EXPECT_EQ(policy.inflight_cap, 16u);
}

TEST(CriticalFloorTest, FloorDoesNotTouchOtherClasses) {
  PolicyTable table = default_policy_table();
  EXPECT_EQ(at(table, Level::kCritical, TrafficClass::kNormal), shed());
}

TEST(CriticalFloorTest, ZeroFloorAllowsShedding) {
  PolicyTable table = default_policy_table();
  table.at(Level::kCritical, TrafficClass::kCritical) = PolicyRule::shed_all();
  CriticalFloor none;
  none.fraction = 0.0;
  none.inflight = 0;
  EXPECT_EQ(at(table, Level::kCritical, TrafficClass::kCritical, none), shed());
}

TEST(CriticalFloorTest, DefaultsAreNeverShedAndSixteenInFlight) {
  const CriticalFloor floor;
  EXPECT_EQ(floor.fraction, 1.0);
  EXPECT_EQ(floor.inflight, 16u);
}

}  // namespace
}  // namespace edgeshed::law
