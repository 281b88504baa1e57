#include "law/level_machine.h"

#include <algorithm>

namespace edgeshed::law {

const LevelThreshold& LevelMachineConfig::threshold(Level level) const {
  switch (level) {
    case Level::kElevated:
      return elevated;
    case Level::kHigh:
      return high;
    case Level::kCritical:
    case Level::kNormal:  // not meaningful; callers never ask
      break;
  }
  return critical;
}

Level LevelMachine::level_for(double pressure) const {
  if (pressure >= config_.critical.enter) return Level::kCritical;
  if (pressure >= config_.high.enter) return Level::kHigh;
  if (pressure >= config_.elevated.enter) return Level::kElevated;
  return Level::kNormal;
}

void LevelMachine::enter(Level level) {
  level_ = level;
  // "Higher" now means something else; the run of ticks over critical's
  // enter, though, goes on whatever level it passes through on the way.
  ticks_over_higher_enter_ = 0;
  if (level == Level::kCritical) ticks_over_critical_enter_ = 0;
  below_exit_since_.reset();
}

void LevelMachine::hold() {
  ticks_over_higher_enter_ = 0;
  ticks_over_critical_enter_ = 0;
  below_exit_since_.reset();
}

void LevelMachine::reset(Level level) {
  enter(level);
  hold();
}

Level LevelMachine::update(double pressure, Level hard_safety_floor, std::chrono::nanoseconds now) {
  const Level highest_met = level_for(pressure);
  ticks_over_higher_enter_ = highest_met > level_ ? ticks_over_higher_enter_ + 1 : 0;
  ticks_over_critical_enter_ = (highest_met == Level::kCritical && level_ != Level::kCritical)
                                   ? ticks_over_critical_enter_ + 1
                                   : 0;

  Level target = level_;
  if (ticks_over_critical_enter_ >= config_.critical_enter_after) {
    target = Level::kCritical;
  } else if (ticks_over_higher_enter_ >= config_.enter_after) {
    // Critical has its own dwell; until it is met, go as high as the others allow.
    target = std::max(level_, std::min(highest_met, Level::kHigh));
  }
  target = std::max(target, hard_safety_floor);
  if (target > level_) {
    enter(target);
    return level_;
  }

  if (level_ == Level::kNormal) return level_;
  const bool below_exit = pressure < config_.threshold(level_).exit && hard_safety_floor < level_;
  if (!below_exit) {
    below_exit_since_.reset();
    return level_;
  }
  if (!below_exit_since_) below_exit_since_ = now;
  if (now - *below_exit_since_ < config_.exit_after) return level_;

  enter(static_cast<Level>(index_of(level_) - 1));
  // The dwell for the next step starts now, if the pressure already allows it.
  if (level_ != Level::kNormal && pressure < config_.threshold(level_).exit) {
    below_exit_since_ = now;
  }
  return level_;
}

}  // namespace edgeshed::law
