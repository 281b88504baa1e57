// Monotonic time for the control law, behind an interface so that tests drive
// dwell times and override expiry without sleeping. Reading the real clock is
// I/O, so it is outside law/: daemon/steady_clock.h; the tests' clock is
// tests/common/fake_clock.h.
#pragma once

#include <chrono>

namespace edgeshed::law {

class Clock {
 public:
  virtual ~Clock() = default;
  // Monotonic: never goes back, unaffected by wall-clock changes.
  virtual std::chrono::nanoseconds now() const = 0;
};

}  // namespace edgeshed::law
