#include "law/idle_reclaim.h"

#include <algorithm>
#include <utility>

#include "law/policy.h"

namespace edgeshed::law {

namespace {
// Shed order: the class that gives up its connections first.
constexpr std::array<TrafficClass, kNumClasses> kReclaimOrder = {
    TrafficClass::kBackground, TrafficClass::kNormal, TrafficClass::kCritical};
}  // namespace

IdleReclaim::IdleReclaim(IdleReclaimConfig config, std::function<double()> uniform)
    : config_(config), uniform_(std::move(uniform)) {}

ClassQuota IdleReclaim::due(std::chrono::nanoseconds now, Level level,
                            const std::array<ClassConnections, kNumClasses>& classes) const {
  ClassQuota quota{};
  if (now < next_ || level == Level::kNormal) return quota;
  uint32_t left = config_.batch;
  for (const TrafficClass c : kReclaimOrder) {
    const ClassConnections& k = classes[index_of(c)];
    if (k.cap == kUnlimited || k.connections <= k.cap) continue;
    quota[index_of(c)] = std::min(left, k.connections - k.cap);
    left -= quota[index_of(c)];
  }
  return quota;
}

std::vector<uint64_t> IdleReclaim::choose(std::vector<IdleCandidate> candidates,
                                          const ClassQuota& quota) const {
  std::erase_if(candidates, [&](const IdleCandidate& c) { return c.idle < config_.min_idle; });
  std::sort(candidates.begin(), candidates.end(),
            [](const IdleCandidate& a, const IdleCandidate& b) { return a.idle > b.idle; });
  ClassQuota left = quota;
  std::vector<uint64_t> chosen;
  for (const IdleCandidate& c : candidates) {
    uint32_t& n = left[index_of(c.traffic_class)];
    if (n == 0) continue;
    --n;
    chosen.push_back(c.cookie);
  }
  return chosen;
}

void IdleReclaim::ran(std::chrono::nanoseconds now) {
  const double spread = config_.jitter * (2.0 * uniform_() - 1.0);
  next_ =
      now + std::chrono::duration_cast<std::chrono::nanoseconds>(config_.interval * (1.0 + spread));
}

}  // namespace edgeshed::law
