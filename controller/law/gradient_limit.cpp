#include "law/gradient_limit.h"

#include <algorithm>
#include <cmath>

#include "law/whole_limit.h"

namespace edgeshed::law {

namespace {
constexpr double kMinGradient = 0.5;
constexpr double kMaxGradient = 2.0;
}  // namespace

GradientLimit::GradientLimit(const GradientLimitConfig& config)
    : config_(config), estimate_(std::clamp<double>(config.initial, config.min, config.max)) {}

uint32_t GradientLimit::limit() const { return whole_limit(estimate_, config_.min); }

void GradientLimit::track_baseline(double latency, std::chrono::nanoseconds now, bool may_rise) {
  if (!baseline_ || latency < *baseline_) {
    baseline_ = latency;
    above_band_since_.reset();
    rising_ = false;
    return;
  }
  if (rising_) {
    // Stop half-way into the band: parked at the band's edge the gradient
    // would be exactly 1 and a limit that fell during the rise could not grow
    // back while the cap sheds.
    if (latency <= *baseline_ * (1.0 + config_.tolerance / 2.0)) {
      rising_ = false;
    } else if (may_rise) {
      *baseline_ += config_.baseline_smoothing * (std::min(latency, 2.0 * *baseline_) - *baseline_);
    }
    return;
  }
  if (!may_rise || latency <= *baseline_ * (1.0 + config_.tolerance)) {
    above_band_since_.reset();
    return;
  }
  if (!above_band_since_) above_band_since_ = now;
  if (now - *above_band_since_ < config_.baseline_rise_after) return;
  rising_ = true;
  above_band_since_.reset();
  *baseline_ += config_.baseline_smoothing * (std::min(latency, 2.0 * *baseline_) - *baseline_);
}

uint32_t GradientLimit::update(const LimitSample& sample) {
  if (!sample.latency_seconds || !std::isfinite(*sample.latency_seconds) ||
      *sample.latency_seconds <= 0.0) {
    above_band_since_.reset();  // a gap breaks "continuously above the band"
    return limit();
  }
  const double latency = *sample.latency_seconds;
  const uint32_t current = limit();
  // More in flight than the limit allows: the limit was not in force (e.g. the
  // level did not cap this traffic), so the latency reflects a backlog the
  // limit never admitted. It may prove the limit too low, never too high.
  const bool over_limit = sample.inflight > current;
  track_baseline(latency, sample.now, /*may_rise=*/!over_limit);

  const bool tested = uint64_t{sample.inflight} * 2 >= current;
  if (!tested) return current;
  const double gradient =
      std::clamp(*baseline_ * (1.0 + config_.tolerance) / latency, kMinGradient, kMaxGradient);
  if (over_limit && gradient < 1.0) return current;

  const bool congested = gradient < 1.0 || sample.sheds > 0;
  const double headroom = congested ? 0.0 : std::sqrt(estimate_);
  const double target = estimate_ * gradient + headroom;
  double next = estimate_ * (1.0 - config_.smoothing) + target * config_.smoothing;
  next = std::clamp(next, estimate_ * config_.max_decrease_per_tick,
                    estimate_ * config_.max_increase_per_tick);
  estimate_ = std::clamp<double>(next, config_.min, config_.max);
  return limit();
}

}  // namespace edgeshed::law
