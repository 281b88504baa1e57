// refserver's Prometheus text exposition: a lock-free histogram that worker
// threads observe into while the metrics thread renders it, and the text
// format helpers. Pure, so that unit tests check the exact output.
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "printf_string.h"

namespace edgeshed::refserver {

inline const std::vector<double>& duration_buckets() {
  static const std::vector<double> kBuckets = {0.001, 0.0025, 0.005, 0.01,  0.015, 0.02, 0.025,
                                               0.03,  0.04,   0.05,  0.075, 0.1,   0.15, 0.2,
                                               0.3,   0.5,    1,     2.5,   5};
  return kBuckets;
}

// Prometheus writes numbers in the shortest form that reads back the same;
// %.17g would print 0.0025 as 0.0025000000000000001.
inline std::string prom_number(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == std::trunc(v) && std::fabs(v) < 1e15) {  // counts and gauges: "10", not "1e+01"
    return tools::printf_string("%.0f", v);
  }
  std::string out;
  for (int precision = 1; precision <= 17; ++precision) {
    out = tools::printf_string("%.*g", precision, v);
    if (std::strtod(out.c_str(), nullptr) == v) break;
  }
  return out;
}

class Histogram {
 public:
  // `bounds` ascending, without +Inf (which is always there).
  explicit Histogram(std::vector<double> bounds)
      : bounds_(std::move(bounds)), counts_(bounds_.size() + 1) {}

  void observe(double seconds) {
    size_t i = 0;
    while (i < bounds_.size() && seconds > bounds_[i]) ++i;  // le: upper bounds are inclusive
    counts_[i].fetch_add(1, std::memory_order_relaxed);
    sum_ns_.fetch_add(static_cast<uint64_t>(std::llround(std::max(seconds, 0.0) * 1e9)),
                      std::memory_order_relaxed);
  }

  // Cumulative, as the format wants: bucket i counts every value <= bound i.
  // Relaxed reads of a moving histogram can be a few observations apart from
  // each other; _count is the +Inf bucket so that the two always agree.
  std::string render(std::string_view name, std::string_view help) const {
    std::string out;
    out.append("# HELP ").append(name).append(" ").append(help).append("\n");
    out.append("# TYPE ").append(name).append(" histogram\n");
    uint64_t cumulative = 0;
    for (size_t i = 0; i <= bounds_.size(); ++i) {
      cumulative += counts_[i].load(std::memory_order_relaxed);
      std::string le = i < bounds_.size() ? prom_number(bounds_[i]) : "+Inf";
      out.append(name).append("_bucket{le=\"").append(le).append("\"} ");
      out.append(std::to_string(cumulative)).append("\n");
    }
    double sum = static_cast<double>(sum_ns_.load(std::memory_order_relaxed)) / 1e9;
    out.append(name).append("_sum ").append(prom_number(sum)).append("\n");
    out.append(name).append("_count ").append(std::to_string(cumulative)).append("\n");
    return out;
  }

 private:
  std::vector<double> bounds_;
  std::vector<std::atomic<uint64_t>> counts_;  // not cumulative; the last is +Inf
  std::atomic<uint64_t> sum_ns_{0};
};

// One metric without labels: "# HELP", "# TYPE" and the sample.
inline std::string render_scalar(std::string_view name, std::string_view type,
                                 std::string_view help, double value) {
  std::string out;
  out.append("# HELP ").append(name).append(" ").append(help).append("\n");
  out.append("# TYPE ").append(name).append(" ").append(type).append("\n");
  out.append(name).append(" ").append(prom_number(value)).append("\n");
  return out;
}

}  // namespace edgeshed::refserver
