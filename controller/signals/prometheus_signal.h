// [[signal]] kind = "prometheus": a number scraped from a service's /metrics.
//
// Either a gauge (metric = "refserver_inflight": the value is the gauge's)
// or a latency quantile from a histogram (metric = "http_request_duration_seconds",
// quantile = 0.9: the value is the 90th percentile, in the histogram's unit,
// of the requests observed between the last two scrapes).
//
// Keys (all checked; unknown keys are errors):
//   url       = "http://host:port/path". Plain http only. Required. A host
//               name is looked up when a connection is opened, on the
//               scrape thread; the lookup is bounded by the resolver's own
//               timeouts, not by `timeout`.
//   metric    = a metric name; for a quantile, the histogram's base name
//               (without _bucket). Required.
//   labels    = { key = "value", ... }: only series with all these labels.
//               A gauge must then match exactly one series; matching
//               histogram series are added bucket by bucket.
//   quantile  = 0 < q <= 1: read metric as a histogram. Default: a gauge.
//   interval  = time between scrapes. Default "1s", 10ms..1h.
//   timeout   = limit on one whole scrape (connect, request, response).
//               Default "200ms", at most interval.
//   max_bytes = largest response body accepted. Default 4194304 (4 MiB).
// stale_after must be at least interval + timeout, or every sample would go
// stale before the next arrives.
//
// Scrapes run on a thread of the source's own; sample() returns the latest
// result at once, so a dead endpoint makes the signal stale, never the tick
// loop slow. Connections are kept alive between scrapes.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "common/result.h"
#include "config/config.h"
#include "signals/http_client.h"
#include "signals/parse/histogram.h"
#include "signals/parse/prometheus_text.h"
#include "signals/periodic_worker.h"
#include "signals/signal_kind.h"
#include "signals/signal_source.h"

namespace edgeshed::signals {

struct PrometheusOptions {
  HttpUrl url;
  std::string metric;
  Labels labels;
  std::optional<double> quantile;
  std::chrono::nanoseconds interval = std::chrono::seconds(1);
  std::chrono::nanoseconds timeout = std::chrono::milliseconds(200);
  std::size_t max_bytes = 4 << 20;
};

// The options of a kind = "prometheus" signal, or every error in its keys.
Result<PrometheusOptions> prometheus_options(const config::SignalConfig& cfg);

// The value of each scrape: the selected gauge, or the quantile over the
// window since the previous scrape (so it keeps the previous histogram).
class MetricReader {
 public:
  MetricReader(std::string metric, Labels labels, std::optional<double> quantile)
      : metric_(std::move(metric)), labels_(std::move(labels)), quantile_(quantile) {}

  // An error also when there is no value this time: a histogram's first
  // scrape, a reset, or a window without observations.
  Result<double> read(const Exposition& exposition);

 private:
  Result<double> read_gauge(const Exposition& exposition) const;
  Result<double> read_quantile(const Exposition& exposition);

  std::string metric_;
  Labels labels_;
  std::optional<double> quantile_;
  HistogramWindowTracker window_;
};

class PrometheusSignal final : public SignalSource {
 public:
  explicit PrometheusSignal(PrometheusOptions options);
  Result<Sample> sample(std::chrono::nanoseconds now) override;

  // Scrapes completed so far, successful or not.
  uint64_t scrapes() const { return worker_.rounds(); }

 private:
  Result<double> scrape(int cancel_fd);  // on the worker thread

  const PrometheusOptions options_;
  HttpClient client_;      // worker thread only
  MetricReader reader_;    // worker thread only
  PeriodicWorker worker_;  // last: stopped before the members it uses go
};

Result<std::unique_ptr<PrometheusSignal>> make_prometheus_signal(const config::SignalConfig& cfg);

// [[signal]] kind = "prometheus": the keys above.
extern const SignalKindDescriptor kPrometheusKind;

}  // namespace edgeshed::signals
