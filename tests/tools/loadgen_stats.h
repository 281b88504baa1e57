// loadgen's arithmetic, kept apart from sockets so that unit tests can check it
// against hand-computed values: outcomes, nearest-rank percentiles and the
// per-group summary that the table, the JSON and the tests read.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace edgeshed::loadgen {

enum class Outcome : uint8_t { kPending, kOk, kRefused, kReset, kTimeout, kError };

inline std::string_view outcome_name(Outcome outcome) {
  switch (outcome) {
    case Outcome::kPending:
      return "pending";
    case Outcome::kOk:
      return "ok";
    case Outcome::kRefused:
      return "refused";
    case Outcome::kReset:
      return "reset";
    case Outcome::kTimeout:
      return "timeout";
    case Outcome::kError:
      return "error";
  }
  return "unknown";
}

// Nearest rank: the smallest sample such that at least p percent of the samples
// are less than or equal to it, i.e. sorted[ceil(p/100 * n) - 1]. It always
// returns a value that was measured, never an interpolation. `sorted` must be
// ascending. The epsilon keeps p * n / 100 from rounding up past a whole rank
// (90 * 10 / 100 is 9.000000000000002 in binary floating point).
inline std::optional<double> nearest_rank(std::span<const double> sorted, double p) {
  if (sorted.empty()) return std::nullopt;
  double exact = std::clamp(p, 0.0, 100.0) * static_cast<double>(sorted.size()) / 100.0;
  auto rank = static_cast<size_t>(std::ceil(exact - 1e-9));
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

struct Distribution {
  size_t count = 0;
  std::optional<double> p50, p90, p99, max, mean;
};

// Sorts the samples in place.
inline Distribution describe(std::vector<double>& samples) {
  Distribution d;
  d.count = samples.size();
  if (samples.empty()) return d;
  std::sort(samples.begin(), samples.end());
  d.p50 = nearest_rank(samples, 50);
  d.p90 = nearest_rank(samples, 90);
  d.p99 = nearest_rank(samples, 99);
  d.max = samples.back();
  double sum = 0;
  for (double s : samples) sum += s;
  d.mean = sum / static_cast<double>(samples.size());
  return d;
}

// One request as the CSV and the summaries see it. Times are milliseconds; the
// start is relative to the start of the run.
struct RequestRecord {
  double start_ms = 0;
  double latency_ms = 0;   // to response complete (ok) or to the failure
  double connect_ms = -1;  // negative: never connected (or reused a connection)
  uint16_t class_index = 0;
  uint16_t phase = 0;
  Outcome outcome = Outcome::kPending;
  std::string_view error;  // errno name or reason; static storage only
};

struct GroupSummary {
  uint64_t offered = 0, ok = 0, refused = 0, reset = 0, timeout = 0, error = 0;
  double completed_per_sec = 0;
  Distribution ok_latency_ms, refused_ms, connect_ms;
  std::map<std::string, uint64_t> error_reasons;
};

// Summarises the records for which `select` is true. `duration_s` is the
// denominator of completed_per_sec (ok responses per second over the run).
template <class Select>
GroupSummary summarize(std::span<const RequestRecord> records, double duration_s, Select select) {
  GroupSummary g;
  std::vector<double> ok_ms, refused_ms, connect_ms;
  for (const RequestRecord& r : records) {
    if (!select(r)) continue;
    ++g.offered;
    if (r.connect_ms >= 0) connect_ms.push_back(r.connect_ms);
    switch (r.outcome) {
      case Outcome::kOk:
        ++g.ok;
        ok_ms.push_back(r.latency_ms);
        break;
      case Outcome::kRefused:
        ++g.refused;
        refused_ms.push_back(r.latency_ms);
        break;
      case Outcome::kReset:
        ++g.reset;
        break;
      // A request still pending when the run was cut short never got an answer.
      case Outcome::kPending:
      case Outcome::kTimeout:
        ++g.timeout;
        break;
      case Outcome::kError:
        ++g.error;
        ++g.error_reasons[std::string(r.error.empty() ? "unknown" : r.error)];
        break;
    }
  }
  g.completed_per_sec = duration_s > 0 ? static_cast<double>(g.ok) / duration_s : 0;
  g.ok_latency_ms = describe(ok_ms);
  g.refused_ms = describe(refused_ms);
  g.connect_ms = describe(connect_ms);
  return g;
}

// Milliseconds rounded to the microsecond: more digits would only be noise.
inline nlohmann::ordered_json ms_value(std::optional<double> v) {
  if (!v) return nullptr;
  return std::round(*v * 1000.0) / 1000.0;
}

// An empty distribution has null percentiles (and count 0), so that a test
// reading p99 of a class that got no answer cannot mistake it for a fast one.
inline nlohmann::ordered_json to_json(const Distribution& d) {
  return {{"count", d.count},       {"p50", ms_value(d.p50)}, {"p90", ms_value(d.p90)},
          {"p99", ms_value(d.p99)}, {"max", ms_value(d.max)}, {"mean", ms_value(d.mean)}};
}

inline nlohmann::ordered_json to_json(const GroupSummary& g) {
  nlohmann::ordered_json j = {
      {"offered", g.offered},
      {"ok", g.ok},
      {"refused", g.refused},
      {"reset", g.reset},
      {"timeout", g.timeout},
      {"error", g.error},
      {"completed_per_sec", std::round(g.completed_per_sec * 100.0) / 100.0},
      {"ok_latency_ms", to_json(g.ok_latency_ms)},
      {"refused_ms", to_json(g.refused_ms)},
      {"connect_ms", to_json(g.connect_ms)},
  };
  j["error_reasons"] = nlohmann::ordered_json::object();
  for (const auto& [reason, n] : g.error_reasons) j["error_reasons"][reason] = n;
  return j;
}

}  // namespace edgeshed::loadgen
