#pragma once

#include "law/limit_algorithm.h"

namespace edgeshed::law {

// A fixed limit, for services whose capacity is known and for comparisons.
class StaticLimit final : public LimitAlgorithm {
 public:
  explicit StaticLimit(StaticLimitConfig config) : limit_(config.limit) {}

  uint32_t update(const LimitSample& /*sample*/) override { return limit_; }
  uint32_t limit() const override { return limit_; }

 private:
  uint32_t limit_;
};

}  // namespace edgeshed::law
