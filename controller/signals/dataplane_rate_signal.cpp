#include "signals/dataplane_rate_signal.h"

#include "common/stats.h"

namespace edgeshed::signals {

uint64_t DataplaneRateSignal::total(const edgeshed_stats& stats, Counter counter,
                                    std::optional<uint32_t> class_id) {
  uint64_t sum = 0;
  for (uint32_t c = 0; c < EDGESHED_NUM_CLASSES; ++c) {
    if (class_id && *class_id != c) continue;
    const auto& k = stats.cls[c];
    const uint64_t shed = class_sheds(k);
    const uint64_t would = class_would_sheds(k);
    switch (counter) {
      case Counter::kSyn:
        // Every SYN to a protected port ends in exactly one of these.
        sum += k[EDGESHED_CTR_ADMITTED] + shed + would + k[EDGESHED_CTR_FAIL_OPEN] +
               k[EDGESHED_CTR_PASS_MODE_OFF];
        break;
      case Counter::kAdmitted:
        sum += k[EDGESHED_CTR_ADMITTED];
        break;
      case Counter::kShed:
        sum += shed;
        break;
      case Counter::kWouldShed:
        sum += would;
        break;
    }
  }
  return sum;
}

Result<Sample> DataplaneRateSignal::sample(std::chrono::nanoseconds now) {
  auto stats = read_();
  if (!stats) return stats.error();
  const uint64_t count = total(*stats, counter_, class_id_);
  double rate = 0;
  if (prev_ && now > prev_at_ && count >= *prev_) {
    rate = static_cast<double>(count - *prev_) * 1e9 / static_cast<double>((now - prev_at_).count());
  }
  prev_ = count;
  prev_at_ = now;
  return Sample{rate, now};
}

}  // namespace edgeshed::signals
