#include "signals/parse/histogram.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace edgeshed::signals {
namespace {

Labels without_le(const Labels& labels) {
  Labels out = labels;
  out.erase("le");
  return out;
}

}  // namespace

Result<HistogramSnapshot> extract_histogram(const Exposition& exposition, std::string_view base,
                                            const Labels& match) {
  const std::string bucket_name = std::string(base) + "_bucket";
  const std::string count_name = std::string(base) + "_count";
  const std::string sum_name = std::string(base) + "_sum";

  // Per series (labels without le): upper bound -> cumulative count.
  std::map<Labels, std::map<double, double>> series;
  HistogramSnapshot snapshot;
  for (const MetricSample& s : exposition.samples) {
    if (!labels_match(s.labels, match)) continue;
    if (s.name == bucket_name) {
      auto le = s.labels.find("le");
      if (le == s.labels.end()) {
        return make_error(format_series(s.name, s.labels) + " has no le label");
      }
      auto bound = parse_prometheus_value(le->second);
      if (!bound || std::isnan(*bound)) {
        return make_error(format_series(s.name, s.labels) + ": le=\"" + le->second +
                          "\" is not a bucket bound");
      }
      if (!std::isfinite(s.value) || s.value < 0) {
        return make_error(format_series(s.name, s.labels) + " has a bad count");
      }
      series[without_le(s.labels)][*bound] += s.value;
    } else if (s.name == count_name) {
      snapshot.count = snapshot.count.value_or(0.0) + s.value;
    } else if (s.name == sum_name) {
      snapshot.sum = snapshot.sum.value_or(0.0) + s.value;
    }
  }
  if (series.empty()) {
    return make_error("no series " + format_series(bucket_name, match) + " in the scrape");
  }

  const auto& [first_labels, first_buckets] = *series.begin();
  for (const auto& [labels, buckets] : series) {
    bool same_bounds = buckets.size() == first_buckets.size() &&
                       std::equal(buckets.begin(), buckets.end(), first_buckets.begin(),
                                  [](const auto& a, const auto& b) { return a.first == b.first; });
    if (!same_bounds) {
      return make_error(format_series(bucket_name, labels) + " and " +
                        format_series(bucket_name, first_labels) +
                        " have different buckets: add labels to select one");
    }
  }
  if (!std::isinf(first_buckets.rbegin()->first) || first_buckets.rbegin()->first < 0) {
    return make_error(format_series(bucket_name, first_labels) + " has no le=\"+Inf\" bucket");
  }
  for (const auto& [bound, count] : first_buckets) snapshot.buckets.push_back({bound, 0.0});
  for (const auto& [labels, buckets] : series) {
    std::size_t i = 0;
    for (const auto& [bound, count] : buckets) snapshot.buckets[i++].count += count;
  }
  return snapshot;
}

namespace {

std::optional<double> interpolated_quantile(double q, const std::vector<Bucket>& input) {
  if (!(q >= 0.0 && q <= 1.0)) return std::nullopt;
  if (input.size() < 2 || !std::isinf(input.back().upper_bound)) return std::nullopt;
  // Prometheus forces counts to be monotonic, since precision loss in the
  // exporter (or summing series scraped at slightly different times) can
  // leave a bucket a hair below the one before it.
  std::vector<Bucket> buckets = input;
  for (std::size_t i = 1; i < buckets.size(); ++i) {
    buckets[i].count = std::max(buckets[i].count, buckets[i - 1].count);
  }
  const double observations = buckets.back().count;
  if (!(observations > 0.0)) return std::nullopt;

  double rank = q * observations;
  std::size_t b = 0;
  while (b < buckets.size() - 1 && buckets[b].count < rank) ++b;
  if (b == buckets.size() - 1) return buckets[b - 1].upper_bound;
  if (b == 0 && buckets[0].upper_bound <= 0) return buckets[0].upper_bound;

  double start = 0.0;
  double end = buckets[b].upper_bound;
  double count = buckets[b].count;
  if (b > 0) {
    start = buckets[b - 1].upper_bound;
    count -= buckets[b - 1].count;
    rank -= buckets[b - 1].count;
  }
  if (count <= 0.0) return start;  // only reachable with q = 0
  return start + (end - start) * (rank / count);
}

}  // namespace

std::optional<double> histogram_quantile(double q, const std::vector<Bucket>& buckets) {
  // Counts that add up past the largest double (several series, or a
  // window between two such scrapes) or a bound at -Inf leave NaN or an
  // infinity, which would pass for a reading.
  auto v = interpolated_quantile(q, buckets);
  if (v && !std::isfinite(*v)) return std::nullopt;
  return v;
}

std::optional<double> HistogramWindow::mean() const {
  if (!sum || !(count > 0.0)) return std::nullopt;
  return *sum / count;
}

HistogramWindowTracker::Outcome HistogramWindowTracker::add(HistogramSnapshot snapshot) {
  if (!previous_) {
    previous_ = std::move(snapshot);
    return Outcome::kFirst;
  }
  const HistogramSnapshot& prev = *previous_;
  bool reset = prev.buckets.size() != snapshot.buckets.size();
  HistogramWindow window;
  for (std::size_t i = 0; !reset && i < snapshot.buckets.size(); ++i) {
    const double delta = snapshot.buckets[i].count - prev.buckets[i].count;
    reset = snapshot.buckets[i].upper_bound != prev.buckets[i].upper_bound || delta < 0;
    window.buckets.push_back({snapshot.buckets[i].upper_bound, delta});
  }
  if (!reset) {
    window.count = window.buckets.back().count;
    if (snapshot.count && prev.count) {
      const double delta = *snapshot.count - *prev.count;
      reset = delta < 0;
      window.count = delta;
    }
    if (snapshot.sum && prev.sum) window.sum = *snapshot.sum - *prev.sum;
  }
  previous_ = std::move(snapshot);
  if (reset) return Outcome::kReset;
  window_ = std::move(window);
  return Outcome::kWindow;
}

Quantiles window_quantiles(const HistogramWindow& window) {
  return {window.quantile(0.5), window.quantile(0.9), window.quantile(0.99)};
}

}  // namespace edgeshed::signals
