// Per level, per class admission policy: what the data plane is told to do
// with new connections of each class.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>

#include "law/types.h"

namespace edgeshed::law {

// No cap / no rate limit. The data plane's ABI encoding of "none" is its own
// business; the dataplane layer converts.
inline constexpr uint32_t kUnlimited = 0xffffffffu;

// What one class gets this tick.
struct ClassPolicy {
  double admit_fraction = 1.0;         // 0..1 of new connections admitted
  uint32_t inflight_cap = kUnlimited;  // max established connections of the class
  uint32_t tokens_per_sec = kUnlimited;
  uint32_t burst = kUnlimited;  // token bucket depth; meaningless when unlimited
  // The queue gate (abi.h): new connections are shed while most requests
  // that entered service this long ago are still in service; 0: no gate.
  std::chrono::nanoseconds queue_age{0};

  bool operator==(const ClassPolicy&) const = default;
};

enum class PolicyAction {
  kAdmit,     // admit all
  kFraction,  // admit `fraction` of new connections
  kCap,       // admit while in-flight < cap (fixed, or the adaptive limit)
  kShed,      // admit none
};

}  // namespace edgeshed::law

namespace edgeshed::names {
template <>
struct TableOf<law::PolicyAction> {
  static constexpr const auto& kNames = kPolicyActions;
  static constexpr std::string_view kWhat = "policy action";
};
}  // namespace edgeshed::names

namespace edgeshed::law {

static_assert(names::ends_at(PolicyAction::kShed));

// One cell of the policy table, as configured.
struct PolicyRule {
  PolicyAction action = PolicyAction::kAdmit;
  double fraction = 1.0;                 // used by kFraction only
  std::optional<uint32_t> fixed_cap;     // kCap only; empty: the adaptive limit
  uint32_t tokens_per_sec = kUnlimited;  // not with kShed
  uint32_t burst = kUnlimited;

  static PolicyRule admit_all() { return {}; }
  static PolicyRule admit_fraction(double fraction);
  static PolicyRule cap_adaptive();
  static PolicyRule cap_fixed(uint32_t cap);
  static PolicyRule shed_all();

  bool operator==(const PolicyRule&) const = default;
};

// rules[level][class].
struct PolicyTable {
  std::array<std::array<PolicyRule, kNumClasses>, kNumLevels> rules;

  PolicyRule& at(Level level, TrafficClass traffic_class) {
    return rules[index_of(level)][index_of(traffic_class)];
  }
  const PolicyRule& at(Level level, TrafficClass traffic_class) const {
    return rules[index_of(level)][index_of(traffic_class)];
  }
};

// Shedding goes from the least important class up as the level rises:
//   normal:   all admit
//   elevated: background admit 0.5, others admit
//   high:     background shed, normal capped at the adaptive limit, critical admit
//   critical: background shed, normal shed, critical capped at critical_cap
// With cap_below_high, normal and background are also capped at the adaptive
// limit at normal, and normal at elevated: for a limit that binds only above
// the service's capacity (the capacity limit), so that the first ticks of an
// overload are already capped rather than waiting for the level to rise.
PolicyTable default_policy_table(uint32_t critical_cap = kUnlimited, bool cap_below_high = false);

// Critical traffic (health checks, control connections, operators) keeps a
// guaranteed floor whatever the policy says: applied to the config's rules
// and to operator pins alike.
struct CriticalFloor {
  double fraction = 1.0;   // 1.0: critical is never shed by the fraction draw
  uint32_t inflight = 16;  // its cap is never below this
};

ClassPolicy resolve_rule(const PolicyRule& rule, uint32_t adaptive_limit);

// Raises admit_fraction and inflight_cap of a critical-class policy to the floor.
ClassPolicy apply_critical_floor(ClassPolicy policy, const CriticalFloor& floor);

// The policies of all classes at a level, floor applied to critical.
std::array<ClassPolicy, kNumClasses> resolve_policies(const PolicyTable& table, Level level,
                                                      uint32_t adaptive_limit,
                                                      const CriticalFloor& floor);

// Policy of a class that must not be restricted at all (fail open).
inline constexpr ClassPolicy kAdmitAll{};

}  // namespace edgeshed::law
