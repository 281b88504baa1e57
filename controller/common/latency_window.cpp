#include "common/latency_window.h"

#include <algorithm>

namespace edgeshed {
namespace {

constexpr double kNsPerSecond = 1e9;

uint64_t bucket_total(const LatencyHistogram& h) {
  uint64_t n = 0;
  for (uint64_t b : h.buckets) n += b;
  return n;
}

// after - before; nullopt when any counter went down (a reset).
std::optional<LatencyHistogram> difference(const LatencyHistogram& after,
                                           const LatencyHistogram& before) {
  if (after.count < before.count || after.sum_ns < before.sum_ns) return std::nullopt;
  LatencyHistogram d{};
  d.count = after.count - before.count;
  d.sum_ns = after.sum_ns - before.sum_ns;
  for (size_t i = 0; i < EDGESHED_LATENCY_BUCKETS; ++i) {
    if (after.buckets[i] < before.buckets[i]) return std::nullopt;
    d.buckets[i] = after.buckets[i] - before.buckets[i];
  }
  return d;
}

}  // namespace

void add_histogram(LatencyHistogram& into, const LatencyHistogram& h) {
  into.count += h.count;
  into.sum_ns += h.sum_ns;
  for (size_t i = 0; i < EDGESHED_LATENCY_BUCKETS; ++i) into.buckets[i] += h.buckets[i];
}

std::optional<double> latency_quantile_s(const LatencyHistogram& h, double q) {
  const uint64_t total = bucket_total(h);
  if (total == 0) return std::nullopt;
  const double rank = std::clamp(q, 0.0, 1.0) * static_cast<double>(total);
  double below = 0;
  for (uint32_t i = 0; i < EDGESHED_LATENCY_BUCKETS; ++i) {
    if (h.buckets[i] == 0) continue;
    const auto n = static_cast<double>(h.buckets[i]);
    if (below + n >= rank) {
      const auto lower = static_cast<double>(edgeshed_latency_bucket_lower_ns(i));
      const auto upper = static_cast<double>(edgeshed_latency_bucket_upper_ns(i));
      const double within = std::max(0.0, rank - below) / n;
      return (lower + within * (upper - lower)) / kNsPerSecond;
    }
    below += n;
  }
  return std::nullopt;  // not reached: rank <= total
}

LatencyWindow::LatencyWindow(std::chrono::nanoseconds window) : window_(window) {}

void LatencyWindow::update(std::chrono::nanoseconds now,
                           const std::vector<PortLatency>& cumulative) {
  if (last_ && now < *last_) ticks_.clear();
  Deltas fresh;
  Deltas deltas;
  for (const auto& p : cumulative) {
    fresh[p.port] = p.measures;
    auto base = baseline_.find(p.port);
    if (base == baseline_.end() || !last_ || now < *last_) continue;
    std::array<LatencyHistogram, kLatencyMeasures> d{};
    bool any = false, reset = false;
    for (size_t m = 0; m < kLatencyMeasures; ++m) {
      auto diff = difference(p.measures[m], base->second[m]);
      if (!diff) {
        reset = true;
        break;
      }
      d[m] = *diff;
      any = any || d[m].count != 0 || bucket_total(d[m]) != 0;
    }
    if (!reset && any) deltas[p.port] = d;
  }
  baseline_ = std::move(fresh);
  if (last_ && now >= *last_) ticks_.push_back(Tick{*last_, now, std::move(deltas)});
  last_ = now;
  expire(now);
}

void LatencyWindow::expire(std::chrono::nanoseconds now) {
  while (!ticks_.empty() && ticks_.front().at <= now - window_) ticks_.pop_front();
}

std::optional<LatencyStats> LatencyWindow::stats(uint16_t port, LatencyMeasure measure) const {
  const auto m = static_cast<size_t>(measure);
  if (m >= kLatencyMeasures || ticks_.empty()) return std::nullopt;
  LatencyHistogram sum{};
  for (const auto& t : ticks_) {
    if (auto it = t.deltas.find(port); it != t.deltas.end()) add_histogram(sum, it->second[m]);
  }
  // A read racing an update on some CPU may see the count before the
  // bucket or the other way round: quantiles use the buckets' own total.
  const uint64_t count = std::max<uint64_t>(sum.count, bucket_total(sum));
  if (count == 0) return std::nullopt;

  LatencyStats s;
  s.count = count;
  const auto span = ticks_.back().at - ticks_.front().from;
  if (span.count() > 0) {
    s.rate_per_s = static_cast<double>(count) * kNsPerSecond / static_cast<double>(span.count());
  }
  if (auto it = ticks_.back().deltas.find(port); it != ticks_.back().deltas.end()) {
    s.last_tick_count = std::max<uint64_t>(it->second[m].count, bucket_total(it->second[m]));
  }
  s.mean_s = static_cast<double>(sum.sum_ns) / static_cast<double>(count) / kNsPerSecond;
  s.p50_s = latency_quantile_s(sum, 0.5).value_or(0);
  s.p90_s = latency_quantile_s(sum, 0.9).value_or(0);
  s.p99_s = latency_quantile_s(sum, 0.99).value_or(0);
  return s;
}

}  // namespace edgeshed
