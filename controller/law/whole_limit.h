// The continuous estimate of an adaptive limit as the whole cap the data
// plane needs, never under the configured minimum.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace edgeshed::law {

inline uint32_t whole_limit(double estimate, uint32_t min) {
  // Keeps 124.99999999 (an exact 125 after rounding error) from becoming 124.
  constexpr double kRoundingSlack = 1e-9;
  return std::max(min, static_cast<uint32_t>(std::floor(estimate + kRoundingSlack)));
}

}  // namespace edgeshed::law
