#include "signals/psi_signal.h"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>

namespace edgeshed::signals {
namespace {

Result<double> parse_double(std::string_view text) {
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return make_error("'" + std::string(text) + "' is not a number");
  }
  return v;
}

// "avg10=0.00 avg60=0.00 avg300=0.00 total=0"
Result<PsiLine> parse_fields(std::string_view rest) {
  PsiLine line;
  int seen = 0;
  std::istringstream in{std::string(rest)};
  std::string field;
  while (in >> field) {
    auto eq = field.find('=');
    if (eq == std::string::npos) return make_error("field '" + field + "' has no '='");
    std::string_view key(field.data(), eq), value(field.data() + eq + 1, field.size() - eq - 1);
    if (key == "total") {
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), line.total_us);
      if (ec != std::errc() || end != value.data() + value.size()) {
        return make_error("total '" + std::string(value) + "' is not a whole number");
      }
      seen |= 8;
      continue;
    }
    auto v = parse_double(value);
    if (!v) return v.error();
    if (key == "avg10")
      line.avg10 = *v, seen |= 1;
    else if (key == "avg60")
      line.avg60 = *v, seen |= 2;
    else if (key == "avg300")
      line.avg300 = *v, seen |= 4;
  }
  if (seen != 15) return make_error("expected avg10, avg60, avg300 and total");
  return line;
}

}  // namespace

Result<PsiStats> parse_psi(std::string_view text) {
  PsiStats stats;
  bool has_some = false;
  std::istringstream in{std::string(text)};
  std::string row;
  while (std::getline(in, row)) {
    if (row.empty()) continue;
    auto space = row.find(' ');
    std::string_view kind(row.data(), space == std::string::npos ? row.size() : space);
    if (space == std::string::npos) return make_error("line '" + row + "' has no fields");
    auto line = parse_fields(std::string_view(row).substr(space + 1));
    if (!line) return make_error("PSI line '" + row + "': " + line.error().message);
    if (kind == "some")
      stats.some = *line, has_some = true;
    else if (kind == "full")
      stats.full = *line;
    else
      return make_error("PSI line '" + row + "': expected 'some' or 'full'");
  }
  if (!has_some) return make_error("no 'some' line in PSI data");
  return stats;
}

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
