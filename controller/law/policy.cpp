#include "law/policy.h"

#include <algorithm>

namespace edgeshed::law {

PolicyRule PolicyRule::admit_fraction(double fraction) {
  PolicyRule rule;
  rule.action = PolicyAction::kFraction;
  rule.fraction = fraction;
  return rule;
}

PolicyRule PolicyRule::cap_adaptive() {
  PolicyRule rule;
  rule.action = PolicyAction::kCap;
  return rule;
}

PolicyRule PolicyRule::cap_fixed(uint32_t cap) {
  PolicyRule rule = cap_adaptive();
  rule.fixed_cap = cap;
  return rule;
}

PolicyRule PolicyRule::shed_all() {
  PolicyRule rule;
  rule.action = PolicyAction::kShed;
  return rule;
}

PolicyTable default_policy_table(uint32_t critical_cap, bool cap_below_high) {
  PolicyTable table;  // every cell admits all
  if (cap_below_high) {
    table.at(Level::kNormal, TrafficClass::kNormal) = PolicyRule::cap_adaptive();
    table.at(Level::kNormal, TrafficClass::kBackground) = PolicyRule::cap_adaptive();
    table.at(Level::kElevated, TrafficClass::kNormal) = PolicyRule::cap_adaptive();
  }
  table.at(Level::kElevated, TrafficClass::kBackground) = PolicyRule::admit_fraction(0.5);
  table.at(Level::kHigh, TrafficClass::kBackground) = PolicyRule::shed_all();
  table.at(Level::kHigh, TrafficClass::kNormal) = PolicyRule::cap_adaptive();
  table.at(Level::kCritical, TrafficClass::kBackground) = PolicyRule::shed_all();
  table.at(Level::kCritical, TrafficClass::kNormal) = PolicyRule::shed_all();
  table.at(Level::kCritical, TrafficClass::kCritical) = PolicyRule::cap_fixed(critical_cap);
  return table;
}

ClassPolicy resolve_rule(const PolicyRule& rule, uint32_t adaptive_limit) {
  ClassPolicy policy;
  switch (rule.action) {
    case PolicyAction::kAdmit:
      break;
    case PolicyAction::kFraction:
      policy.admit_fraction = std::clamp(rule.fraction, 0.0, 1.0);
      break;
    case PolicyAction::kCap:
      policy.inflight_cap = rule.fixed_cap.value_or(adaptive_limit);
      break;
    case PolicyAction::kShed:
      policy.admit_fraction = 0.0;
      return policy;  // a token bucket on a shed class would change nothing
  }
  policy.tokens_per_sec = rule.tokens_per_sec;
  policy.burst = rule.burst;
  return policy;
}

ClassPolicy apply_critical_floor(ClassPolicy policy, const CriticalFloor& floor) {
  policy.admit_fraction = std::max(policy.admit_fraction, floor.fraction);
  policy.inflight_cap = std::max(policy.inflight_cap, floor.inflight);
  return policy;
}

std::array<ClassPolicy, kNumClasses> resolve_policies(const PolicyTable& table, Level level,
                                                      uint32_t adaptive_limit,
                                                      const CriticalFloor& floor) {
  std::array<ClassPolicy, kNumClasses> policies;
  for (TrafficClass traffic_class : kAllClasses) {
    policies[index_of(traffic_class)] =
        resolve_rule(table.at(level, traffic_class), adaptive_limit);
  }
  ClassPolicy& critical = policies[index_of(TrafficClass::kCritical)];
  critical = apply_critical_floor(critical, floor);
  return policies;
}

}  // namespace edgeshed::law
