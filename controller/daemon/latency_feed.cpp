#include "daemon/latency_feed.h"

#include <set>

namespace edgeshed::daemon {
void LatencyFeed::update(std::chrono::nanoseconds now,
                         const std::vector<Result<std::vector<PortLatency>>>& per_interface) {
  std::vector<PortLatency> ports;
  std::set<uint16_t> seen;
  PortLatency all;
  all.port = signals::kAllPorts;
  std::string error;
  for (const auto& read : per_interface) {
    if (!read) {
      error = read.error().message;
      continue;
    }
    for (const auto& p : *read) {
      if (p.port == signals::kAllPorts || !seen.insert(p.port).second) continue;
      ports.push_back(p);
      for (size_t m = 0; m < kLatencyMeasures; ++m) add_histogram(all.measures[m], p.measures[m]);
    }
  }
  // A failed read feeds nothing: the window would take the missing ports'
  // next reading as a reset, and the sum's as a drop.
  if (!error.empty()) {
    error_ = error;
    return;
  }
  ports.push_back(all);
  window_.update(now, ports);
  limit_window_.update(now, {all});
  snapshot_.clear();
  for (const auto& p : ports) {
    auto& s = snapshot_[p.port];
    s.response = window_.stats(p.port, LatencyMeasure::kResponse);
    s.connection = window_.stats(p.port, LatencyMeasure::kConnection);
  }
  error_.clear();
}

std::optional<LatencyStats> LatencyFeed::limit_input() const {
  if (!error_.empty()) return std::nullopt;
  return limit_window_.stats(signals::kAllPorts, LatencyMeasure::kResponse);
}

Result<signals::LatencySnapshot> LatencyFeed::snapshot() const {
  if (!error_.empty()) return make_error(error_);
  return snapshot_;
}

}  // namespace edgeshed::daemon
