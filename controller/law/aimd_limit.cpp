#include "law/aimd_limit.h"

#include <algorithm>
#include <cmath>

namespace edgeshed::law {

AimdLimit::AimdLimit(const AimdLimitConfig& config)
    : config_(config), limit_(std::clamp(config.initial, config.min, config.max)) {}

uint32_t AimdLimit::update(const LimitSample& sample) {
  const bool slow =
      sample.latency_seconds && *sample.latency_seconds > config_.latency_threshold_seconds;
  const bool limit_in_force = sample.inflight <= limit_;
  if (sample.sheds > 0 || (slow && limit_in_force)) {
    const auto backed_off = static_cast<uint32_t>(std::floor(limit_ * config_.backoff));
    limit_ = std::max(config_.min, backed_off);
    return limit_;
  }
  const bool tested = uint64_t{sample.inflight} * 2 >= limit_;
  if (sample.latency_seconds && !slow && tested) {
    limit_ =
        static_cast<uint32_t>(std::min<uint64_t>(config_.max, uint64_t{limit_} + config_.increase));
  }
  return limit_;
}

}  // namespace edgeshed::law
