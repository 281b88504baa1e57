#pragma once

#include "law/limit_algorithm.h"

namespace edgeshed::law {

// Additive increase, multiplicative decrease, TCP style.
//
//   congested  = sheds > 0 || (latency > latency_threshold && in-flight <= limit)
//   congested:   limit = max(min, floor(limit * backoff))
//   otherwise:   limit = min(max, limit + increase), only when a latency under
//                the threshold was measured and in-flight reached half the
//                limit (a limit the traffic never came near was not tested,
//                so it earns nothing)
//
// A slow sample with more in flight than the limit was taken while the limit
// was not in force (see gradient_limit.h): it neither lowers nor raises it.
// Sheds count as congestion: a shed connection was turned away, not served
// fast. Note the consequence: while the cap itself sheds (sustained overload)
// AIMD keeps backing off towards min; gradient does not have this problem.
class AimdLimit final : public LimitAlgorithm {
 public:
  explicit AimdLimit(const AimdLimitConfig& config);

  uint32_t update(const LimitSample& sample) override;
  uint32_t limit() const override { return limit_; }

 private:
  AimdLimitConfig config_;
  uint32_t limit_;
};

}  // namespace edgeshed::law
