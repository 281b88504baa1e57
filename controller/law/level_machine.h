// The pressure level state machine: fast, possibly skipping, escalation and
// slow, one-step-at-a-time de-escalation with hysteresis.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "law/types.h"

namespace edgeshed::law {

struct LevelThreshold {
  double enter = 0.0;  // pressure >= enter may raise the level to this one
  double exit = 0.0;   // pressure < exit, long enough, lowers it by one
};

// Pressure is value / target, so 1.0 means "at target". Elevated starts right
// at target and high at 30% over it, because one signal at target is already
// using the headroom the target was chosen to leave; critical is twice the
// target, a clear overload. Each exit sits below its enter so that pressure
// hovering at a threshold cannot flap the level: elevated is left only at 80%
// of target, high only once back at target, critical at 1.5x.
struct LevelMachineConfig {
  LevelThreshold elevated{1.0, 0.8};
  LevelThreshold high{1.3, 1.0};
  LevelThreshold critical{2.0, 1.5};
  // Consecutive ticks over a higher enter threshold before escalating: one
  // noisy tick is not enough...
  uint32_t enter_after = 2;
  // ...except for critical, where waiting costs more than a false alarm.
  uint32_t critical_enter_after = 1;
  // Pressure stays below the current level's exit this long before one step down.
  std::chrono::nanoseconds exit_after = std::chrono::seconds(3);

  // Thresholds of elevated, high or critical (normal has none).
  const LevelThreshold& threshold(Level level) const;
};

// Assumes a validated config (config/ checks enter thresholds rise from level
// to level and each exit lies in (0, enter)).
class LevelMachine {
 public:
  explicit LevelMachine(const LevelMachineConfig& config) : config_(config) {}

  // Feeds one tick's pressure. hard_safety_floor is the level hard-safety
  // signals alone reach (see level_for): the level is raised to it at once,
  // without dwell, and never goes below it.
  Level update(double pressure, Level hard_safety_floor, std::chrono::nanoseconds now);

  // No usable signal this tick: keep the level, and drop partial evidence
  // (dwell counts, exit timer) so decisions after the gap rest on fresh data.
  void hold();

  // Jumps to a level directly (fail-open drops to normal).
  void reset(Level level);

  Level level() const { return level_; }

  // Highest level whose enter threshold the pressure meets, ignoring dwell.
  Level level_for(double pressure) const;

  const LevelMachineConfig& config() const { return config_; }

 private:
  void enter(Level level);

  LevelMachineConfig config_;
  Level level_ = Level::kNormal;
  uint32_t ticks_over_higher_enter_ = 0;
  uint32_t ticks_over_critical_enter_ = 0;
  // Since when pressure has been below the current level's exit threshold.
  std::optional<std::chrono::nanoseconds> below_exit_since_;
};

}  // namespace edgeshed::law
