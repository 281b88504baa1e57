#include "law/clock.h"

#include <ctime>

namespace edgeshed::law {

std::chrono::nanoseconds SteadyClock::now() const {
  timespec ts{};
  // Cannot fail for CLOCK_MONOTONIC with a valid pointer.
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
}

}  // namespace edgeshed::law
