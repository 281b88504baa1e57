#include "law/control_law.h"

#include <algorithm>
#include <numeric>

namespace edgeshed::law {

LevelControlLaw::LevelControlLaw(const ControlLawConfig& config, const Clock& clock)
    : config_(config),
      clock_(clock),
      levels_(config.levels),
      limit_(make_limit_algorithm(config.limit)) {}

void LevelControlLaw::reconfigure(const ControlLawConfig& config) {
  const Level current = levels_.level();
  levels_ = LevelMachine(config.levels);
  levels_.reset(current);
  if (config.limit != config_.limit) {
    // What the old limit learnt of the service is still true of it.
    const std::optional<Knowledge> knowledge = limit_->knowledge();
    limit_ = make_limit_algorithm(config.limit);
    if (knowledge) limit_->warm_start(*knowledge);
  }
  config_ = config;
}

LimitSample LevelControlLaw::limit_sample(const TickInputs& inputs, std::chrono::nanoseconds now) {
  LimitSample sample;
  sample.latency_seconds = inputs.latency_seconds;
  sample.tail_latency_seconds = inputs.tail_latency_seconds;
  sample.completions = inputs.completions;
  sample.queue_seen = inputs.gate_sheds > 0;
  if (last_tick_ && now > *last_tick_) sample.interval = now - *last_tick_;
  last_tick_ = now;
  // The limit learns from the traffic it governed since the last decision;
  // when it governed none, from all of it.
  const bool any_limited =
      std::find(limited_classes_.begin(), limited_classes_.end(), true) != limited_classes_.end();
  for (TrafficClass traffic_class : kAllClasses) {
    if (!any_limited || limited_classes_[index_of(traffic_class)]) {
      sample.inflight += inputs.inflight[index_of(traffic_class)];
      sample.peak_inflight += inputs.peak_inflight[index_of(traffic_class)];
      sample.queue_seen = sample.queue_seen || inputs.queued[index_of(traffic_class)];
    }
  }
  sample.sheds = std::accumulate(inputs.sheds.begin(), inputs.sheds.end(), uint64_t{0});
  sample.now = now;
  return sample;
}

void LevelControlLaw::choose_policies(Decision& decision) {
  limited_classes_.fill(false);
  if (decision.fail_open) {
    decision.policies.fill(kAdmitAll);
  } else {
    decision.policies = resolve_policies(config_.policy, decision.level, decision.adaptive_limit,
                                         config_.critical_floor);
    for (TrafficClass traffic_class : kAllClasses) {
      const PolicyRule& rule = config_.policy.at(decision.level, traffic_class);
      limited_classes_[index_of(traffic_class)] =
          rule.action == PolicyAction::kCap && !rule.fixed_cap;
    }
  }
  for (TrafficClass traffic_class : kAllClasses) {
    const std::optional<ClassPin>& pin = overrides_.classes[index_of(traffic_class)];
    if (!pin) continue;
    ClassPolicy& policy = decision.policies[index_of(traffic_class)];
    policy = apply_pin(policy, *pin);
    decision.class_pinned[index_of(traffic_class)] = true;
    if (pin->inflight_cap) limited_classes_[index_of(traffic_class)] = false;
  }
  // The gate goes with the adaptive limit: a fixed cap or a pin is the
  // operator's, and a class it does not cap is not its to shed.
  for (TrafficClass traffic_class : kAllClasses) {
    if (limited_classes_[index_of(traffic_class)] && decision.queue_age) {
      decision.policies[index_of(traffic_class)].queue_age = *decision.queue_age;
    }
  }
  // Pins cannot take the critical class under its floor either.
  ClassPolicy& critical = decision.policies[index_of(TrafficClass::kCritical)];
  critical = apply_critical_floor(critical, config_.critical_floor);
}

Decision LevelControlLaw::tick(const TickInputs& inputs) {
  const std::chrono::nanoseconds now = clock_.now();
  overrides_.expire(now);

  Decision decision;
  // Learn from the interval that just ended before deciding the next one.
  decision.adaptive_limit = limit_->update(limit_sample(inputs, now));
  decision.adaptive_limit_open = limit_->open();
  decision.limit_knowledge = limit_->knowledge();
  decision.queue_age = limit_->queue_age();

  const PressureSummary summary = summarize_pressure(inputs.signals);
  decision.pressure = summary.pressure;
  decision.drivers = summary.drivers;
  decision.all_stale = summary.all_stale;
  decision.hard_safety_floor = levels_.level_for(summary.hard_safety_pressure);
  if (!summary.all_stale) {
    levels_.update(summary.pressure, decision.hard_safety_floor, now);
  } else if (config_.all_stale == AllStalePolicy::kFailOpen) {
    levels_.reset(Level::kNormal);
    decision.fail_open = true;
  } else {
    levels_.hold();
  }
  decision.law_level = levels_.level();
  decision.level = decision.law_level;

  // An operator pin wins over the law, fail-open included, but not over a
  // hard-safety signal: that one guards the host itself.
  if (overrides_.level) {
    decision.level = std::max(overrides_.level->level, decision.hard_safety_floor);
    decision.level_pinned = true;
    decision.fail_open = false;
  }
  choose_policies(decision);

  decision.mode = overrides_.mode ? overrides_.mode->mode : config_.mode;
  decision.mode_pinned = overrides_.mode.has_value();

  decision.previous_level = last_level_;
  decision.level_changed = decision.level != last_level_;
  last_level_ = decision.level;
  return decision;
}

}  // namespace edgeshed::law
