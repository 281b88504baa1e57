#include "signals/psi_signal.h"

#include <cerrno>

#include "signals/dataplane_readers.h"
#include "signals/signal_params.h"

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

namespace {

// Each resource's file, in /proc/pressure or in a cgroup (<resource>.pressure).
constexpr Choices<std::string_view, 3> kResources = {{
    {"cpu", "cpu"},
    {"memory", "memory"},
    {"io", "io"},
}};
constexpr Choices<PsiSignal::Line, 2> kLines = {{
    {"some", PsiSignal::Line::kSome},
    {"full", PsiSignal::Line::kFull},
}};
constexpr Choices<PsiSignal::Measure, 2> kMeasures = {{
    {"tick", PsiSignal::Measure::kTick},
    {"avg10", PsiSignal::Measure::kAvg10},
}};

// [[signal]] kind = "psi": resource = "cpu"|"memory"|"io", line = "some"|"full"
// (default some), measure = "tick"|"avg10" (default tick), cgroup = a cgroup
// v2 directory (default: the whole host, /proc/pressure).
MadeSource make_psi(const config::SignalConfig& cfg, const DataplaneReaders& /*readers*/) {
  ParamReader p(cfg, {"resource", "line", "measure", "cgroup"});
  const std::string resource(p.choice("resource", kResources, std::optional<std::string_view>()));
  const auto line = p.choice("line", kLines, std::optional(PsiSignal::Line::kSome));
  const auto measure = p.choice("measure", kMeasures, std::optional(PsiSignal::Measure::kTick));
  const auto cgroup = p.string("cgroup");
  if (auto s = p.finish(); !s) return s.error();
  std::string path = cgroup ? *cgroup + "/" + resource + ".pressure" : "/proc/pressure/" + resource;
  return std::unique_ptr<SignalSource>(std::make_unique<PsiSignal>(path, line, measure));
}

}  // namespace

const SignalKindDescriptor kPsiKind = {
    .meaning =
        "share of the tick that tasks stalled on CPU, memory or IO (`/proc/pressure` or a cgroup)",
    .check = check_by_making<make_psi>,
    .make = make_psi,
};

}  // namespace edgeshed::signals
