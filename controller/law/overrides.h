// Operator overrides: pins that win over the control law until removed or
// expired.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>

#include "law/policy.h"
#include "law/types.h"

namespace edgeshed::law {

// expires_at is a time on the law's Clock; empty: until removed.
struct LevelPin {
  Level level = Level::kNormal;
  std::optional<std::chrono::nanoseconds> expires_at;
};

// Fields left empty keep what the law decided, so an operator can pin only
// the fraction, or only the cap, of one class.
struct ClassPin {
  std::optional<double> admit_fraction;
  std::optional<uint32_t> inflight_cap;
  std::optional<uint32_t> tokens_per_sec;
  std::optional<uint32_t> burst;
  std::optional<std::chrono::nanoseconds> expires_at;
};

struct ModePin {
  Mode mode = Mode::kObserve;
  std::optional<std::chrono::nanoseconds> expires_at;
};

struct Overrides {
  std::optional<LevelPin> level;
  std::array<std::optional<ClassPin>, kNumClasses> classes;
  std::optional<ModePin> mode;

  // Removes the pins whose expiry is at or before now.
  void expire(std::chrono::nanoseconds now);
  bool empty() const;
};

ClassPolicy apply_pin(ClassPolicy policy, const ClassPin& pin);

}  // namespace edgeshed::law
