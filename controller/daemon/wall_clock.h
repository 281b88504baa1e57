// The wall clock, behind an interface like the law's monotonic clock: the
// operator's --for durations and the persisted changes are in wall time, and
// tests move it without sleeping.
#pragma once

#include <chrono>

namespace edgeshed::daemon {

using WallTime = std::chrono::system_clock::time_point;

class WallClock {
 public:
  virtual ~WallClock() = default;
  virtual WallTime now() const = 0;
};

class SystemWallClock final : public WallClock {
 public:
  WallTime now() const override { return std::chrono::system_clock::now(); }
};

}  // namespace edgeshed::daemon
