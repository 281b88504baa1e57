// A clock that moves only when told, so that tests drive dwell times and
// override expiry without sleeping.
#pragma once

#include <chrono>

#include "law/clock.h"

namespace edgeshed::testing {

class FakeClock final : public law::Clock {
 public:
  explicit FakeClock(std::chrono::nanoseconds start = std::chrono::seconds(1000)) : now_(start) {}

  std::chrono::nanoseconds now() const override { return now_; }
  void advance(std::chrono::nanoseconds by) { now_ += by; }

 private:
  std::chrono::nanoseconds now_;
};

}  // namespace edgeshed::testing
