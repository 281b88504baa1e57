// [policy.<level>.<class>] rules and the [critical] floor they must respect.
#include <string>
#include <vector>

#include "config/parse_sections.h"

namespace edgeshed::config::sections {

namespace {

// One [policy.<level>.<class>] table. Returns false when invalid.
bool parse_policy_rule(TableReader& reader, law::PolicyRule& rule) {
  law::PolicyRule parsed;
  reader.require("action");
  bool valid = reader.choice("action", parsed.action, names::kPolicyActions);
  const bool is_fraction = parsed.action == law::PolicyAction::kFraction;
  const bool is_cap = parsed.action == law::PolicyAction::kCap;
  const bool is_shed = parsed.action == law::PolicyAction::kShed;
  using enum law::PolicyAction;
  auto with_action = [](const std::vector<law::PolicyAction>& actions) {
    return "action = " + names::quoted_names(actions);
  };
  auto only_with = [&](std::string_view key, bool allowed, const std::string& what) {
    reader.allow(key);
    if (!allowed && reader.source_table().contains(key)) {
      reader.invalid(key, "only valid with " + what);
      valid = false;
      return false;
    }
    return true;
  };

  if (only_with("fraction", is_fraction, with_action({kFraction}))) {
    if (is_fraction && reader.require("fraction")) valid = false;
    if (!reader.number("fraction", parsed.fraction, 0.0, 1.0, Bounds::kClosed)) {
      valid = valid && !reader.source_table().contains("fraction");
    }
  }
  if (only_with("cap", is_cap, with_action({kCap}))) {
    uint32_t cap = 0;
    if (reader.integer("cap", cap, 1, kMaxConnections)) {
      parsed.fixed_cap = cap;
    } else if (reader.source_table().contains("cap")) {
      valid = false;
    }
  }
  const std::string not_shed = with_action({kAdmit, kFraction, kCap});
  if (only_with("tokens_per_sec", !is_shed, not_shed)) {
    if (!reader.integer("tokens_per_sec", parsed.tokens_per_sec, 1, kMaxRate)) {
      valid = valid && !reader.source_table().contains("tokens_per_sec");
    }
  }
  if (only_with("burst", !is_shed, not_shed)) {
    if (reader.integer("burst", parsed.burst, 1, kMaxRate)) {
      if (!reader.source_table().contains("tokens_per_sec")) {
        reader.invalid("burst", "only valid with tokens_per_sec");
        valid = false;
      }
    } else if (reader.source_table().contains("burst")) {
      valid = false;
    } else if (parsed.tokens_per_sec != law::kUnlimited) {
      parsed.burst = parsed.tokens_per_sec;  // one second's worth
    }
  }
  reader.reject_unknown_keys();
  if (valid) rule = parsed;
  return valid;
}

}  // namespace

void parse_policy(TableReader& reader, law::PolicyTable& policy, PolicyReaders& critical_rules) {
  for (law::Level level : law::kAllLevels) {
    const std::string level_name(names::name_of(level));
    const toml::table* level_table = reader.table(level_name);
    if (level_table == nullptr) continue;
    TableReader level_reader(reader.errors(), *level_table, reader.path_of(level_name));
    for (law::TrafficClass traffic_class : law::kAllClasses) {
      const std::string class_name(names::name_of(traffic_class));
      const toml::table* rule_table = level_reader.table(class_name);
      if (rule_table == nullptr) continue;
      TableReader rule_reader(reader.errors(), *rule_table, level_reader.path_of(class_name));
      const bool valid = parse_policy_rule(rule_reader, policy.at(level, traffic_class));
      if (valid && traffic_class == law::TrafficClass::kCritical) {
        critical_rules.emplace_back(level, rule_reader);
      }
    }
    level_reader.reject_unknown_keys();
  }
  reader.reject_unknown_keys();
}

void check_critical_floor(const law::PolicyTable& policy, PolicyReaders& critical_rules,
                          const law::CriticalFloor& floor) {
  const std::string fraction_floor =
      "critical.floor_fraction (" + format_number(floor.fraction) + ")";
  const std::string inflight_floor =
      "critical.floor_inflight (" + std::to_string(floor.inflight) + ")";
  for (auto& [level, reader] : critical_rules) {
    const law::PolicyRule& rule = policy.at(level, law::TrafficClass::kCritical);
    if (rule.action == law::PolicyAction::kShed && floor.fraction > 0.0) {
      reader.invalid("action", "would shed critical traffic below its guaranteed " +
                                   fraction_floor + "; lower the floor to allow it");
    } else if (rule.action == law::PolicyAction::kFraction && rule.fraction < floor.fraction) {
      reader.invalid("fraction", "is below the guaranteed " + fraction_floor +
                                     " of critical traffic; lower the floor to allow it");
    } else if (rule.action == law::PolicyAction::kCap && rule.fixed_cap &&
               *rule.fixed_cap < floor.inflight) {
      reader.invalid("cap", "is below the guaranteed " + inflight_floor +
                                " of critical traffic; lower the floor to allow it");
    }
  }
}

void parse_critical(TableReader& reader, law::CriticalFloor& floor, uint32_t& cap) {
  reader.number("floor_fraction", floor.fraction, 0.0, 1.0, Bounds::kClosed);
  reader.integer("floor_inflight", floor.inflight, 0, kMaxConnections);
  if (reader.integer("cap", cap, 1, kMaxConnections) && cap < floor.inflight) {
    reader.invalid("cap",
                   "must be >= critical.floor_inflight (" + std::to_string(floor.inflight) + ")");
  }
  reader.reject_unknown_keys();
}

}  // namespace edgeshed::config::sections
