// The Prometheus text exposition format (version 0.0.4), as served on
// /metrics. Pure parsing, no I/O: a scrape source hands it the body.
//
// Malformed input is rejected with the line number and what is wrong rather
// than skipped, because a skipped line would turn into a missing series, and
// a missing series into a silent zero or a stale signal with no reason given.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace edgeshed::signals {

using Labels = std::map<std::string, std::string, std::less<>>;

enum class MetricType { kUntyped, kCounter, kGauge, kHistogram, kSummary };

std::string_view to_string(MetricType type);

struct MetricSample {
  std::string name;  // as written, e.g. "http_request_duration_seconds_bucket"
  Labels labels;
  double value = 0.0;
  std::optional<int64_t> timestamp_ms;
};

struct Exposition {
  std::vector<MetricSample> samples;  // in input order
  // From "# TYPE" lines, by family name ("http_request_duration_seconds",
  // not "..._bucket").
  std::map<std::string, MetricType, std::less<>> types;
  std::map<std::string, std::string, std::less<>> help;

  // The declared type of the family a sample name belongs to: the name
  // itself, or for histograms and summaries the name without its _bucket,
  // _count or _sum suffix. Untyped when no TYPE line covers it.
  MetricType type_of(std::string_view sample_name) const;
};

// Errors read "line N: <what is wrong>".
Result<Exposition> parse_prometheus_text(std::string_view text);

// One sample value as the format writes it: decimal or scientific notation,
// or Inf/NaN with an optional sign (also how a bucket's le label is written).
Result<double> parse_prometheus_value(std::string_view token);

// Whether `labels` has every label of `match` with the same value (extra
// labels are fine), as a PromQL selector matches.
bool labels_match(const Labels& labels, const Labels& match);

// "name{a=\"x\",b=\"y\"}", for error messages.
// A label value as the text format writes it: backslash, double quote and
// newline escaped.
std::string escape_label_value(std::string_view value);

std::string format_series(std::string_view name, const Labels& labels);

}  // namespace edgeshed::signals
