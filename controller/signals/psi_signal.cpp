#include "signals/psi_signal.h"

#include <cerrno>

namespace edgeshed::signals {

double PsiSignal::stall_percent(uint64_t total_us, uint64_t prev_total_us,
                                std::chrono::nanoseconds elapsed) {
  if (elapsed.count() <= 0 || total_us < prev_total_us) return 0;
  double stalled_ns = static_cast<double>(total_us - prev_total_us) * 1000.0;
  double pct = 100.0 * stalled_ns / static_cast<double>(elapsed.count());
  return pct > 100.0 ? 100.0 : pct;
}

Result<Sample> PsiSignal::sample(std::chrono::nanoseconds now) {
  auto text = file_.read();
  if (!text) {
    const int err = file_.failed_errno();
    return make_error(text.error().message + (err == ENOENT || err == EOPNOTSUPP
                                                  ? " (PSI disabled? boot with psi=1, kernel 4.20+)"
                                                  : ""));
  }
  auto stats = parse_psi(*text);
  if (!stats) return make_error(file_.path() + ": " + stats.error().message);
  if (line_ == Line::kFull && !stats->full)
    return make_error(file_.path() + ": has no 'full' line");
  const PsiLine& line = line_ == Line::kFull ? *stats->full : stats->some;

  double value = line.avg10;
  if (measure_ == Measure::kTick && prev_total_us_) {
    value = stall_percent(line.total_us, *prev_total_us_, now - prev_at_);
  }
  prev_total_us_ = line.total_us;
  prev_at_ = now;
  return Sample{value, now};
}

}  // namespace edgeshed::signals
