#include "signals/accept_queue_signal.h"

#include <algorithm>

namespace edgeshed::signals {

double AcceptQueueSignal::value_of(const QueueSnapshot& snapshot, Measure measure,
                                   std::optional<uint16_t> port) {
  auto value = [measure](const PortQueue& q) {
    switch (measure) {
      case Measure::kSojourn:
        return static_cast<double>(q.oldest_ns) / 1e9;
      case Measure::kDepth:
        return static_cast<double>(q.depth);
      case Measure::kFill:
        return q.max_depth ? static_cast<double>(q.depth) / q.max_depth : 0.0;
    }
    return 0.0;
  };
  if (port) {
    auto it = snapshot.find(*port);
    return it == snapshot.end() ? 0.0 : value(it->second);
  }
  double worst = 0;
  for (const auto& [p, q] : snapshot) worst = std::max(worst, value(q));
  return worst;
}

Result<Sample> AcceptQueueSignal::sample(std::chrono::nanoseconds now) {
  auto snapshot = read_();
  if (!snapshot) return snapshot.error();
  return Sample{value_of(*snapshot, measure_, port_), now};
}

}  // namespace edgeshed::signals
