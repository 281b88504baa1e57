#include "law/overrides.h"

#include <algorithm>

namespace edgeshed::law {

namespace {

template <class Pin>
void drop_if_expired(std::optional<Pin>& pin, std::chrono::nanoseconds now) {
  if (pin && pin->expires_at && *pin->expires_at <= now) pin.reset();
}

}  // namespace

void Overrides::expire(std::chrono::nanoseconds now) {
  drop_if_expired(level, now);
  for (std::optional<ClassPin>& pin : classes) drop_if_expired(pin, now);
  drop_if_expired(mode, now);
}

bool Overrides::empty() const {
  return !level && !mode && std::none_of(classes.begin(), classes.end(), [](const auto& pin) {
    return pin.has_value();
  });
}

ClassPolicy apply_pin(ClassPolicy policy, const ClassPin& pin) {
  if (pin.admit_fraction) policy.admit_fraction = std::clamp(*pin.admit_fraction, 0.0, 1.0);
  if (pin.inflight_cap) policy.inflight_cap = *pin.inflight_cap;
  if (pin.tokens_per_sec) policy.tokens_per_sec = *pin.tokens_per_sec;
  if (pin.burst) policy.burst = *pin.burst;
  return policy;
}

}  // namespace edgeshed::law
