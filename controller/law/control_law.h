// The control law: signal readings in, one admission decision per tick out.
// Pure logic: no kernel, no I/O, no logging (the daemon logs the Decision).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "law/clock.h"
#include "law/level_machine.h"
#include "law/limit_algorithm.h"
#include "law/overrides.h"
#include "law/policy.h"
#include "law/pressure.h"
#include "law/types.h"

namespace edgeshed::law {

// What to do when no signal is usable.
enum class AllStalePolicy {
  kHold,      // keep the current level: the last known state is the best guess
  kFailOpen,  // drop to normal and admit everything: never shed blind
};

}  // namespace edgeshed::law

namespace edgeshed::names {
template <>
struct TableOf<law::AllStalePolicy> {
  static constexpr const auto& kNames = kAllStale;
  static constexpr std::string_view kWhat = "all_stale";
};
}  // namespace edgeshed::names

namespace edgeshed::law {

static_assert(names::ends_at(AllStalePolicy::kFailOpen));

struct ControlLawConfig {
  LevelMachineConfig levels;
  PolicyTable policy = default_policy_table();
  CriticalFloor critical_floor;
  LimitConfig limit;
  AllStalePolicy all_stale = AllStalePolicy::kHold;
  Mode mode = Mode::kObserve;
};

struct TickInputs {
  std::vector<SignalReading> signals;
  // For the limit algorithm: latency of admitted work (seconds), if measured.
  // The capacity limit wants the response-time p90 over a sliding window of
  // about 500 ms (see capacity_limit.h).
  std::optional<double> latency_seconds;
  // For the limit algorithm: responses completed since the last tick, if
  // measured. Needed by the capacity limit only.
  std::optional<uint64_t> completions;
  // For the capacity limit: the response time's p99 over the same window.
  std::optional<double> tail_latency_seconds;
  std::array<uint32_t, kNumClasses> inflight{};
  // Per class, the most in flight at once since the last tick; 0 when not
  // measured.
  std::array<uint32_t, kNumClasses> peak_inflight{};
  std::array<uint64_t, kNumClasses> sheds{};  // since the last tick
  // Per class, the queue gate's evidence held at the tick; and the gate's
  // sheds (and would-sheds) since the last tick, all classes.
  std::array<bool, kNumClasses> queued{};
  uint64_t gate_sheds = 0;
};

struct Decision {
  Level level = Level::kNormal;           // what the policies were chosen for
  Level previous_level = Level::kNormal;  // level of the previous decision
  bool level_changed = false;
  Level law_level = Level::kNormal;  // what the law alone would say (differs when pinned)
  // Level the hard-safety signals' own pressure gives; the level is never below it.
  Level hard_safety_floor = Level::kNormal;
  double pressure = 0.0;
  std::vector<std::string> drivers;  // signals at the max pressure
  std::array<ClassPolicy, kNumClasses> policies;
  uint32_t adaptive_limit = 0;
  bool adaptive_limit_open = false;  // no queue seen yet: the limit binds nowhere
  // The queue gate's age, for the classes the adaptive limit caps; empty:
  // no gate (nothing learnt of the service's response time yet).
  std::optional<std::chrono::nanoseconds> queue_age;
  // What the limit learnt of the service (status, and the state directory).
  std::optional<Knowledge> limit_knowledge;
  bool all_stale = false;
  bool fail_open = false;  // all signals stale and all_stale = fail_open: admit all
  Mode mode = Mode::kObserve;
  bool level_pinned = false;
  bool mode_pinned = false;
  std::array<bool, kNumClasses> class_pinned{};

  const ClassPolicy& policy(TrafficClass traffic_class) const {
    return policies[index_of(traffic_class)];
  }
};

class ControlLaw {
 public:
  virtual ~ControlLaw() = default;

  virtual Decision tick(const TickInputs& inputs) = 0;

  // Replaces the operator pins. Expiry times are on the law's clock.
  virtual void set_overrides(const Overrides& overrides) = 0;
  // Current pins (expired ones are dropped at the next tick).
  virtual const Overrides& overrides() const = 0;

  // Applies a reloaded config, keeping the current level and pins; the limit
  // algorithm keeps its state unless its config changed.
  virtual void reconfigure(const ControlLawConfig& config) = 0;

  // What the limit learnt of the service, to keep across restarts; empty
  // while too little to trust.
  virtual std::optional<Knowledge> limit_knowledge() const = 0;
  // Before the first tick: what an earlier run learnt of the same service.
  virtual void warm_start(const Knowledge& knowledge) = 0;
};

class LevelControlLaw final : public ControlLaw {
 public:
  // clock must outlive the law.
  LevelControlLaw(const ControlLawConfig& config, const Clock& clock);

  Decision tick(const TickInputs& inputs) override;
  void set_overrides(const Overrides& overrides) override { overrides_ = overrides; }
  const Overrides& overrides() const override { return overrides_; }
  void reconfigure(const ControlLawConfig& config) override;
  std::optional<Knowledge> limit_knowledge() const override { return limit_->knowledge(); }
  void warm_start(const Knowledge& knowledge) override { limit_->warm_start(knowledge); }

 private:
  LimitSample limit_sample(const TickInputs& inputs, std::chrono::nanoseconds now);
  // Fills policies and class_pinned, and records which classes the limit caps.
  void choose_policies(Decision& decision);

  ControlLawConfig config_;
  const Clock& clock_;
  LevelMachine levels_;
  std::unique_ptr<LimitAlgorithm> limit_;
  Overrides overrides_;
  Level last_level_ = Level::kNormal;
  std::optional<std::chrono::nanoseconds> last_tick_;  // for the limit's interval
  // Classes whose in-flight cap in the last decision was the adaptive limit.
  std::array<bool, kNumClasses> limited_classes_{};
};

}  // namespace edgeshed::law
