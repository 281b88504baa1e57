// libFuzzer target: the Prometheus text parser (signals::parse_prometheus_text),
// fed whatever a scraped service answers, and what the prometheus signal
// does with a parse: histogram extraction and windowed quantiles between
// two scrapes. The input is split at its first form feed into the two
// scrapes. A quantile is a finite number or nothing: never NaN or infinite,
// which the signal would hand on as a reading.
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "signals/parse/histogram.h"
#include "signals/parse/prometheus_text.h"

namespace {

using namespace edgeshed::signals;

void check_quantiles(const HistogramWindow& w, std::string_view what) {
  for (double q : {0.0, 0.5, 0.9, 0.99, 1.0}) {
    auto v = w.quantile(q);
    FUZZ_CHECK(!v || std::isfinite(*v), std::string(what) + ": quantile " + std::to_string(*v));
  }
  (void)window_quantiles(w);
  (void)w.mean();
}

// The histogram bases an exposition has: names of its _bucket series.
std::set<std::string> bases(const Exposition& e) {
  std::set<std::string> out;
  for (const auto& s : e.samples) {
    if (s.name.size() > 7 && s.name.ends_with("_bucket"))
      out.insert(s.name.substr(0, s.name.size() - 7));
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t split = input.find('\f');
  const std::string_view scrapes[2] = {input.substr(0, split), split == std::string_view::npos
                                                                   ? std::string_view()
                                                                   : input.substr(split + 1)};
  // One tracker per histogram, like one configured signal each; the first
  // two histograms of the first scrape only.
  std::map<std::string, HistogramWindowTracker> trackers;
  for (const std::string_view text : scrapes) {
    auto e = parse_prometheus_text(text);
    if (!e) {
      FUZZ_CHECK(e.error().message.starts_with("line "), e.error().message);
      continue;
    }
    for (const auto& s : e->samples) {
      FUZZ_CHECK(!s.name.empty(), "a sample without a name");
      FUZZ_CHECK(labels_match(s.labels, s.labels), format_series(s.name, s.labels));
      FUZZ_CHECK(labels_match(s.labels, {}), format_series(s.name, s.labels));
      (void)e->type_of(s.name);
    }
    for (const auto& base : bases(*e)) {
      if (!trackers.contains(base) && (trackers.size() == 2 || text.data() != input.data()))
        continue;
      auto h = extract_histogram(*e, base, {});
      if (!h) continue;
      FUZZ_CHECK(!h->buckets.empty() && std::isinf(h->buckets.back().upper_bound), base);
      for (double q : {0.5, 0.99}) {
        auto v = histogram_quantile(q, h->buckets);
        FUZZ_CHECK(!v || std::isfinite(*v),
                   base + ": quantile of one scrape " + std::to_string(*v));
      }
      if (trackers[base].add(*h) == HistogramWindowTracker::Outcome::kWindow) {
        check_quantiles(trackers[base].window(), base);
      }
    }
  }
  return 0;
}
