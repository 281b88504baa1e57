#include "signals/psi_signal.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace edgeshed::signals {

double PsiSignal::stall_percent(uint64_t total_us, uint64_t prev_total_us,
                                std::chrono::nanoseconds elapsed) {
  if (elapsed.count() <= 0 || total_us < prev_total_us) return 0;
  double stalled_ns = static_cast<double>(total_us - prev_total_us) * 1000.0;
  double pct = 100.0 * stalled_ns / static_cast<double>(elapsed.count());
  return pct > 100.0 ? 100.0 : pct;
}

Result<Sample> PsiSignal::sample(std::chrono::nanoseconds now) {
  std::ifstream in(path_);
  if (!in) {
    std::string why = std::strerror(errno);
    return make_error("cannot read " + path_ + ": " + why +
                      (errno == ENOENT || errno == EOPNOTSUPP
                           ? " (PSI disabled? boot with psi=1, kernel 4.20+)"
                           : ""));
  }
  std::stringstream text;
  text << in.rdbuf();
  auto stats = parse_psi(text.str());
  if (!stats) return make_error(path_ + ": " + stats.error().message);
  if (line_ == Line::kFull && !stats->full) return make_error(path_ + ": has no 'full' line");
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
