#include "daemon/policy_writer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

namespace edgeshed::daemon {

edgeshed_class_policy to_abi(const law::ClassPolicy& p) {
  edgeshed_class_policy out{};
  double shed = 1.0 - std::clamp(p.admit_fraction, 0.0, 1.0);
  out.shed_frac = static_cast<uint32_t>(std::lround(shed * EDGESHED_FRAC_ONE));
  // A cap of 0 would mean "no cap" to the data plane; shed all instead.
  if (p.inflight_cap == 0) out.shed_frac = EDGESHED_FRAC_ONE;
  out.inflight_cap = p.inflight_cap == law::kUnlimited ? 0 : p.inflight_cap;
  if (p.tokens_per_sec == 0) out.shed_frac = EDGESHED_FRAC_ONE;
  if (p.tokens_per_sec != law::kUnlimited && p.tokens_per_sec != 0) {
    out.tokens_per_sec = p.tokens_per_sec;
    out.burst = p.burst == law::kUnlimited ? p.tokens_per_sec : std::max<uint32_t>(p.burst, 1);
  }
  if (p.queue_age.count() > 0) {
    // Rounded up: 0 would mean no gate.
    const auto us = std::chrono::ceil<std::chrono::microseconds>(p.queue_age).count();
    out.queue_age_us =
        static_cast<uint32_t>(std::min<int64_t>(us, std::numeric_limits<uint32_t>::max()));
  }
  return out;
}

edgeshed_policy_set to_policy_set(const law::Decision& decision, uint64_t generation,
                                  uint32_t max_connections) {
  edgeshed_policy_set set{};
  for (auto c : law::kAllClasses) {
    auto& cls = set.cls[law::index_of(c)];
    cls = decision.fail_open ? edgeshed_class_policy{} : to_abi(decision.policy(c));
    if (!decision.fail_open) cls.conn_cap = max_connections;
  }
  set.level = static_cast<uint32_t>(decision.level);
  set.generation = generation;
  return set;
}

}  // namespace edgeshed::daemon
