// Monotonic time for the control law, behind an interface so that tests drive
// dwell times and override expiry without sleeping.
#pragma once

#include <chrono>

namespace edgeshed::law {

class Clock {
 public:
  virtual ~Clock() = default;
  // Monotonic: never goes back, unaffected by wall-clock changes.
  virtual std::chrono::nanoseconds now() const = 0;
};

// CLOCK_MONOTONIC, the clock bpf_ktime_get_ns() reads, so heartbeats written
// from it compare directly with the data plane's timestamps.
class SteadyClock final : public Clock {
 public:
  std::chrono::nanoseconds now() const override;
};

class FakeClock final : public Clock {
 public:
  explicit FakeClock(std::chrono::nanoseconds start = std::chrono::seconds(1000)) : now_(start) {}

  std::chrono::nanoseconds now() const override { return now_; }
  void advance(std::chrono::nanoseconds by) { now_ += by; }

 private:
  std::chrono::nanoseconds now_;
};

}  // namespace edgeshed::law
