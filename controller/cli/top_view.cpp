#include "cli/top_view.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

#include "common/names.h"
#include "cli/status_model.h"

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
  for (const auto& iface : status["interfaces"]) {
    if (!iface.contains("rates")) continue;  // first frame, or unreadable
    for (uint32_t c = 0; c < EDGESHED_NUM_CLASSES; ++c) {
      const auto& r = iface["rates"]["classes"][std::string(names::name_of(names::kClasses, c))];
      shed[c] += r["shed"].get<double>() + r["would_shed"].get<double>();
    }
  }
  for (uint32_t c = 0; c < EDGESHED_NUM_CLASSES; ++c) push_bounded(shed_[c], shed[c], kPoints);
}

std::vector<std::string> top_frame(const nlohmann::ordered_json& status, const TopHistory& history,
                                   const std::string& clock, double interval_s) {
  std::vector<std::string> out;
  out.push_back(fmt::format("edgeshed top  {}  refresh {:g} s  (q or Ctrl-C to quit)", clock,
                            interval_s));
  out.emplace_back();
  auto last = [](const std::deque<double>& d) { return d.empty() ? 0.0 : d.back(); };
  auto peak = [](const std::deque<double>& d) {
    return d.empty() ? 0.0 : *std::max_element(d.begin(), d.end());
  };
  const size_t w = TopHistory::kPoints;
  // Pressure is drawn against at least 2.0 (critical's default): a calm
  // minute must not look like a storm.
  out.push_back(fmt::format("  {:<22} |{}| now {:.2f}, max {:.2f}", "pressure (last minute)",
                            sparkline(history.pressure(), w, 2.0), last(history.pressure()),
                            peak(history.pressure())));
  for (uint32_t c = 0; c < EDGESHED_NUM_CLASSES; ++c) {
    const auto& s = history.shed_rate(c);
    out.push_back(fmt::format("  {:<22} |{}| now {:.1f}/s, max {:.1f}/s",
                              "shed/s " + std::string(names::name_of(names::kClasses, c)),
                              sparkline(s, w, 1.0), last(s), peak(s)));
  }
  out.emplace_back();
  for (auto& line : status_lines(status)) out.push_back(std::move(line));
  return out;
}

}  // namespace edgeshed
