// The map writer's translation of law decisions into the ABI.
#include "daemon/policy_writer.h"

#include <gtest/gtest.h>

#include <chrono>

namespace edgeshed::daemon {
namespace {

TEST(PolicyWriter, AdmitAllIsTheAllZeroPolicy) {
  law::ClassPolicy p;  // admit 1.0, everything unlimited
  auto abi = to_abi(p);
  EXPECT_EQ(abi.shed_frac, 0u);
  EXPECT_EQ(abi.inflight_cap, 0u);
  EXPECT_EQ(abi.tokens_per_sec, 0u);
  EXPECT_EQ(abi.burst, 0u);
}

TEST(PolicyWriter, FractionsBecomeShedFractions) {
  law::ClassPolicy p;
  p.admit_fraction = 0.25;
  EXPECT_EQ(to_abi(p).shed_frac, EDGESHED_FRAC_ONE * 3 / 4);
  p.admit_fraction = 0.0;
  EXPECT_EQ(to_abi(p).shed_frac, EDGESHED_FRAC_ONE);
  p.admit_fraction = 1.7;  // out of range is clamped, never negative
  EXPECT_EQ(to_abi(p).shed_frac, 0u);
}

TEST(PolicyWriter, TheQueueGatesAgeInMicrosecondsRoundedUp) {
  law::ClassPolicy p;
  EXPECT_EQ(to_abi(p).queue_age_us, 0u);  // no gate
  p.queue_age = std::chrono::microseconds(33'000);
  EXPECT_EQ(to_abi(p).queue_age_us, 33'000u);
  p.queue_age = std::chrono::nanoseconds(1);  // never 0, which is no gate
  EXPECT_EQ(to_abi(p).queue_age_us, 1u);
  p.queue_age = std::chrono::hours(2);  // past the field: its largest
  EXPECT_EQ(to_abi(p).queue_age_us, 0xffffffffu);
}

TEST(PolicyWriter, CapsAndRates) {
  law::ClassPolicy p;
  p.inflight_cap = 12;
  p.tokens_per_sec = 500;
  p.burst = law::kUnlimited;
  auto abi = to_abi(p);
  EXPECT_EQ(abi.inflight_cap, 12u);
  EXPECT_EQ(abi.tokens_per_sec, 500u);
  EXPECT_EQ(abi.burst, 500u);  // one second's worth
  p.burst = 50;
  EXPECT_EQ(to_abi(p).burst, 50u);
}

TEST(PolicyWriter, ZeroCapShedsEverythingInsteadOfMeaningNone) {
  law::ClassPolicy p;
  p.inflight_cap = 0;
  EXPECT_EQ(to_abi(p).shed_frac, EDGESHED_FRAC_ONE);
}

TEST(PolicyWriter, FailOpenDecisionAdmitsAll) {
  law::Decision d;
  for (auto& p : d.policies) p.admit_fraction = 0;
  d.fail_open = true;
  d.level = law::Level::kHigh;
  auto set = to_policy_set(d, 42, 500);
  for (auto c : law::kAllClasses) {
    EXPECT_EQ(set.cls[law::index_of(c)].shed_frac, 0u);
    EXPECT_EQ(set.cls[law::index_of(c)].conn_cap, 0u);
  }
  EXPECT_EQ(set.level, 2u);
  EXPECT_EQ(set.generation, 42u);
}

// The operator's connection cap applies to every class, beside the limit on
// requests in service that the law sets.
TEST(PolicyWriter, ConnectionCapGoesToEveryClass) {
  law::Decision d;
  d.policies[law::index_of(law::TrafficClass::kNormal)].inflight_cap = 12;
  auto set = to_policy_set(d, 1, 500);
  // Service 0's classes: the law's policies are its own.
  for (auto c : law::kAllClasses) EXPECT_EQ(set.cls[law::index_of(c)].conn_cap, 500u);
  EXPECT_EQ(set.cls[law::index_of(law::TrafficClass::kNormal)].inflight_cap, 12u);
  EXPECT_EQ(to_policy_set(d, 2).cls[0].conn_cap, 0u);
}

}  // namespace
}  // namespace edgeshed::daemon
