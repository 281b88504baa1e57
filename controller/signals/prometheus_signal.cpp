#include "signals/prometheus_signal.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "common/duration.h"
#include "signals/signal_params.h"

namespace edgeshed::signals {
namespace {

bool valid_metric_name(std::string_view name) {
  if (name.empty()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
              (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

bool valid_label_name(std::string_view name) {
  return valid_metric_name(name) && name.find(':') == std::string_view::npos;
}

std::string format_number(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

}  // namespace

Result<PrometheusOptions> prometheus_options(const config::SignalConfig& cfg) {
  ParamReader params(cfg,
                     {"url", "metric", "labels", "quantile", "interval", "timeout", "max_bytes"});
  PrometheusOptions options;
  if (auto url = params.string("url", /*required=*/true)) {
    auto parsed = parse_http_url(*url);
    if (parsed) {
      options.url = std::move(*parsed);
    } else {
      params.invalid("url", parsed.error().message);
    }
  }
  if (auto metric = params.string("metric", /*required=*/true)) {
    if (valid_metric_name(*metric)) {
      options.metric = *metric;
    } else {
      params.invalid("metric", "not a metric name ([a-zA-Z_:][a-zA-Z0-9_:]*)");
    }
  }
  options.quantile = params.number("quantile", 0.0, 1.0);
  if (options.quantile && *options.quantile == 0.0) {
    params.invalid("quantile", "must be above 0 (0 < quantile <= 1)");
    options.quantile.reset();
  }
  if (const toml::table* labels = params.table("labels")) {
    for (const auto& [key, node] : *labels) {
      if (!valid_label_name(key.str())) {
        params.invalid("labels", "'" + std::string(key.str()) +
                                     "' is not a label name ([a-zA-Z_][a-zA-Z0-9_]*)");
      } else if (key.str() == "le" && params.has("quantile")) {
        params.invalid("labels", "le selects one bucket; a quantile needs all of them");
      } else if (!node.is_string()) {
        params.invalid("labels", "the value of '" + std::string(key.str()) + "' is not a string");
      } else {
        options.labels.emplace(std::string(key.str()), *node.value<std::string>());
      }
    }
  }
  params.periodic(options.interval, options.timeout);
  options.max_bytes = static_cast<std::size_t>(
      params.integer("max_bytes", static_cast<int64_t>(options.max_bytes), 1024, int64_t{1} << 30));
  if (auto s = params.finish(); !s) return s.error();
  return options;
}

Result<double> MetricReader::read(const Exposition& exposition) {
  return quantile_ ? read_quantile(exposition) : read_gauge(exposition);
}

Result<double> MetricReader::read_gauge(const Exposition& exposition) const {
  const std::string wanted = format_series(metric_, labels_);
  MetricType type = exposition.type_of(metric_);
  if (type == MetricType::kHistogram) {
    return make_error(metric_ + " is a histogram: set quantile to read a latency from it");
  }
  if (type == MetricType::kCounter) {
    return make_error(metric_ + " is a counter, which only grows: use a gauge, or a histogram " +
                      "with quantile");
  }
  const MetricSample* found = nullptr;
  const MetricSample* other = nullptr;  // same name, other labels: for the error
  std::size_t count = 0;
  for (const MetricSample& s : exposition.samples) {
    if (s.name != metric_) continue;
    if (!labels_match(s.labels, labels_)) {
      other = &s;
      continue;
    }
    if (++count == 1) {
      found = &s;
    } else if (count == 2) {
      other = &s;
    }
  }
  if (count > 1) {
    return make_error(std::to_string(count) + " series match " + wanted + ", e.g. " +
                      format_series(found->name, found->labels) + " and " +
                      format_series(other->name, other->labels) + ": add labels to select one");
  }
  if (found == nullptr) {
    if (other != nullptr) {
      return make_error("no series " + wanted + " in the scrape (there is " +
                        format_series(other->name, other->labels) + ")");
    }
    for (const MetricSample& s : exposition.samples) {
      if (s.name == metric_ + "_bucket") {
        return make_error(metric_ + " is a histogram: set quantile to read a latency from it");
      }
    }
    return make_error("no series " + wanted + " in the scrape (" +
                      std::to_string(exposition.samples.size()) + " samples)");
  }
  if (!std::isfinite(found->value)) {
    return make_error(wanted + " is " + format_number(found->value) + ", not a usable value");
  }
  return found->value;
}

Result<double> MetricReader::read_quantile(const Exposition& exposition) {
  MetricType type = exposition.type_of(metric_);
  if (type != MetricType::kHistogram && type != MetricType::kUntyped) {
    return make_error(metric_ + " is a " + std::string(to_string(type)) +
                      ", not a histogram: quantile needs one");
  }
  auto snapshot = extract_histogram(exposition, metric_, labels_);
  if (!snapshot) return snapshot.error();
  const std::string what = format_series(metric_, labels_);
  switch (window_.add(std::move(*snapshot))) {
    case HistogramWindowTracker::Outcome::kFirst:
      return make_error("first scrape of " + what +
                        ": a quantile needs the increase between two scrapes");
    case HistogramWindowTracker::Outcome::kReset:
      return make_error(what + " went down or changed buckets (target restarted?): " +
                        "counting again from this scrape");
    case HistogramWindowTracker::Outcome::kWindow:
      break;
  }
  auto q = window_.window().quantile(*quantile_);
  if (!q) return make_error("no observations of " + what + " since the previous scrape");
  return *q;
}

PrometheusSignal::PrometheusSignal(PrometheusOptions options)
    : options_(std::move(options)),
      client_(options_.url, {.timeout = options_.timeout,
                             .max_body_bytes = options_.max_bytes,
                             .keep_alive = true,
                             .source = std::nullopt,
                             // The text format: a server that also speaks
                             // OpenMetrics or protobuf must not pick those.
                             .accept = "text/plain;version=0.0.4;q=1.0, */*;q=0.1"}),
      reader_(options_.metric, options_.labels, options_.quantile),
      worker_(options_.interval, [this](int cancel_fd) { return scrape(cancel_fd); }) {}

Result<Sample> PrometheusSignal::sample(std::chrono::nanoseconds now) {
  return worker_.latest(now);
}

Result<double> PrometheusSignal::scrape(int cancel_fd) {
  auto response = client_.get(cancel_fd);
  if (!response) return response.error();
  const std::string url = options_.url.to_string();
  if (response->status < 200 || response->status > 299) {
    return make_error("GET " + url + ": HTTP " + std::to_string(response->status) + " " +
                      response->reason);
  }
  auto exposition = parse_prometheus_text(response->body);
  if (!exposition) return make_error(url + ": bad metrics text: " + exposition.error().message);
  auto value = reader_.read(*exposition);
  if (!value) return make_error(url + ": " + value.error().message);
  return value;
}

Result<std::unique_ptr<PrometheusSignal>> make_prometheus_signal(const config::SignalConfig& cfg) {
  auto options = prometheus_options(cfg);
  if (!options) return options.error();
  return std::make_unique<PrometheusSignal>(std::move(*options));
}

const SignalKindDescriptor kPrometheusKind = {
    .meaning = "a gauge, or a windowed histogram quantile, scraped from the service's `/metrics`",
    .check = check_options<prometheus_options>,
    .make =
        [](const config::SignalConfig& cfg, const DataplaneReaders& /*readers*/) {
          return as_source(make_prometheus_signal(cfg));
        },
};

}  // namespace edgeshed::signals
