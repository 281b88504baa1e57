// Quantiles of a Prometheus histogram over the window between two scrapes.
//
// The cumulative buckets since process start say little about the last
// second, so the quantile comes from the bucket increases between two
// scrapes, as histogram_quantile(q, rate(x_bucket[w])) would give.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "signals/parse/prometheus_text.h"

namespace edgeshed::signals {

struct Bucket {
  double upper_bound = 0.0;  // the le label; +Inf for the last bucket
  double count = 0.0;        // cumulative: observations <= upper_bound
};

// One scrape of a histogram: buckets sorted by upper bound, ending in +Inf.
struct HistogramSnapshot {
  std::vector<Bucket> buckets;
  std::optional<double> count;  // <base>_count, when exposed
  std::optional<double> sum;    // <base>_sum, when exposed
};

// Selects <base>_bucket (and _count, _sum) series whose labels include every
// label of `match`, and adds matching series bucket by bucket, as
// sum by (le) (...) does: the buckets of, say, every handler of a server add
// up to the server's histogram. Errors when nothing matches, a bucket has no
// or a bad le label, the series disagree on their buckets, or there is no
// +Inf bucket.
Result<HistogramSnapshot> extract_histogram(const Exposition& exposition, std::string_view base,
                                            const Labels& match);

// histogram_quantile as Prometheus computes it from cumulative buckets:
// linear interpolation within the bucket holding the rank (the first bucket
// starts at 0), and the upper bound of the last finite bucket when the rank
// falls in the +Inf bucket. nullopt when there are no observations, no
// finite bucket, or counts and bounds that give no finite quantile (a sum
// past the largest double, a -Inf bound): no value, rather than a zero that
// looks like a fast service, or a NaN.
std::optional<double> histogram_quantile(double q, const std::vector<Bucket>& buckets);

// The observations between two scrapes.
struct HistogramWindow {
  std::vector<Bucket> buckets;  // cumulative counts within the window
  double count = 0.0;
  std::optional<double> sum;

  std::optional<double> quantile(double q) const { return histogram_quantile(q, buckets); }
  std::optional<double> mean() const;
};

// Keeps the previous scrape and turns each new one into a window.
class HistogramWindowTracker {
 public:
  enum class Outcome {
    kWindow,  // window() holds the observations since the previous scrape
    kFirst,   // the first scrape: nothing to subtract yet
    kReset,   // a count went down (the target restarted) or the buckets
              // changed: this scrape is the new base, no window this time
  };

  Outcome add(HistogramSnapshot snapshot);
  const HistogramWindow& window() const { return window_; }

 private:
  std::optional<HistogramSnapshot> previous_;
  HistogramWindow window_;
};

// The quantiles the status output shows.
struct Quantiles {
  std::optional<double> p50, p90, p99;
};
Quantiles window_quantiles(const HistogramWindow& window);

}  // namespace edgeshed::signals
