#include "cli/interface_rates.h"

#include "common/stats.h"

namespace edgeshed {

void add_rates(InterfaceReading& after, const InterfaceReading& before) {
  if (after.status.error || before.status.error) return;
  const double secs = static_cast<double>(after.at_ns - before.at_ns) / 1e9;
  if (secs <= 0) return;
  RatesStatus rates;
  rates.interval_s = secs;
  for (uint32_t c = 0; c < EDGESHED_NUM_CLASSES; ++c) {
    const ClassCounters& a = after.stats.cls[c];
    const ClassCounters& b = before.stats.cls[c];
    auto per_sec = [&](uint64_t x, uint64_t y) { return static_cast<double>(x - y) / secs; };
    auto counter = [&](int i) { return per_sec(a[i], b[i]); };
    ClassRates& k = rates.classes[c];
    k.admitted = counter(EDGESHED_CTR_ADMITTED);
    k.shed = per_sec(class_sheds(a), class_sheds(b));
    k.shed_cap = counter(EDGESHED_CTR_SHED_CAP);
    k.shed_fraction = counter(EDGESHED_CTR_SHED_FRAC);
    k.shed_rate = counter(EDGESHED_CTR_SHED_RATE);
    k.would_shed = per_sec(class_would_sheds(a), class_would_sheds(b));
    k.fail_open = counter(EDGESHED_CTR_FAIL_OPEN);
    k.rst_sent = counter(EDGESHED_CTR_RST_SENT);
    k.rst_capped = counter(EDGESHED_CTR_RST_CAPPED);
  }
  after.status.rates = rates;
}

}  // namespace edgeshed
