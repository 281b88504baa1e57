#include "cli/top_view.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

#include "cli/interface_status.h"
#include "cli/status_model.h"
#include "cli/status_summary.h"
#include "common/names.h"

namespace edgeshed {
namespace {

constexpr const char* kBlocks[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
constexpr size_t kNumBlocks = std::size(kBlocks);

template <class T>
void push_bounded(std::deque<T>& d, T v, size_t n) {
  d.push_back(v);
  while (d.size() > n) d.pop_front();
}

}  // namespace

std::string sparkline(const std::deque<double>& values, size_t width, double floor) {
  const size_t first = values.size() > width ? values.size() - width : 0;
  double top = floor;
  for (size_t i = first; i < values.size(); ++i) top = std::max(top, values[i]);
  std::string out(width - std::min(width, values.size() - first), ' ');
  for (size_t i = first; i < values.size(); ++i) {
    double v = std::isfinite(values[i]) ? std::max(0.0, values[i]) : 0.0;
    size_t idx = top > 0 ? static_cast<size_t>(std::lround(v / top * (kNumBlocks - 1))) : 0;
    out += kBlocks[std::min(idx, kNumBlocks - 1)];
  }
  return out;
}

void TopHistory::add(const nlohmann::ordered_json& status) {
  const auto& d = status["daemon"];
  double p = 0;
  if (!d.is_null() && d["pressure"].is_number()) p = d["pressure"].get<double>();
  push_bounded(pressure_, p, kPoints);
  std::array<double, EDGESHED_NUM_CLASSES> shed{};
  for (const auto& j : status["interfaces"]) {
    auto iface = interface_status_from_json(j);
    if (!iface || !iface->rates) continue;  // first frame, or unreadable
    for (uint32_t c = 0; c < EDGESHED_NUM_CLASSES; ++c) {
      const ClassRates& r = iface->rates->classes[c];
      shed[c] += r.shed + r.would_shed;
    }
  }
  for (uint32_t c = 0; c < EDGESHED_NUM_CLASSES; ++c) push_bounded(shed_[c], shed[c], kPoints);
}

std::deque<double> squeeze(const std::deque<double>& values, size_t width) {
  if (values.size() <= width || width == 0) return values;
  std::deque<double> out;
  for (size_t i = 0; i < width; ++i) {
    const size_t from = i * values.size() / width;
    const size_t to = (i + 1) * values.size() / width;
    out.push_back(*std::max_element(values.begin() + static_cast<std::ptrdiff_t>(from),
                                    values.begin() + static_cast<std::ptrdiff_t>(to)));
  }
  return out;
}

std::vector<std::string> top_frame(const nlohmann::ordered_json& status, const TopHistory& history,
                                   const std::string& clock, double interval_s, bool verbose) {
  std::vector<std::string> out;
  out.push_back(
      fmt::format("edgeshed top  {}  every {:g} s  (q or Ctrl-C quits)", clock, interval_s));
  out.emplace_back();
  auto last = [](const std::deque<double>& d) { return d.empty() ? 0.0 : d.back(); };
  auto peak = [](const std::deque<double>& d) {
    return d.empty() ? 0.0 : *std::max_element(d.begin(), d.end());
  };
  // A minute of samples in 34 columns: with the label and the figures, 80.
  constexpr size_t kColumns = 34;
  out.emplace_back("  last minute");
  // Pressure is drawn against at least 2.0 (critical's default): a calm
  // minute must not look like a storm.
  out.push_back(fmt::format("  {:<17}|{}| now {:.2f}, max {:.2f}", "pressure",
                            sparkline(squeeze(history.pressure(), kColumns), kColumns, 2.0),
                            last(history.pressure()), peak(history.pressure())));
  for (uint32_t c = 0; c < EDGESHED_NUM_CLASSES; ++c) {
    const auto& s = history.shed_rate(c);
    out.push_back(fmt::format("  {:<17}|{}| now {:.0f}/s max {:.0f}/s",
                              "shed/s " + std::string(names::name_of(names::kClasses, c)),
                              sparkline(squeeze(s, kColumns), kColumns, 1.0), last(s), peak(s)));
  }
  out.emplace_back();
  for (auto& line : verbose ? status_lines(status) : status_summary(status)) {
    out.push_back(std::move(line));
  }
  return out;
}

}  // namespace edgeshed
