#include "signals/accept_queue_signal.h"

#include <algorithm>

#include "signals/dataplane_readers.h"
#include "signals/signal_params.h"

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

namespace {

using Measure = AcceptQueueSignal::Measure;
constexpr Choices<Measure, 3> kMeasures = {{
    {"sojourn", Measure::kSojourn},
    {"depth", Measure::kDepth},
    {"fill", Measure::kFill},
}};

// [[signal]] kind = "accept_queue": measure = "sojourn" (seconds the oldest
// waiting connection has waited; default) | "depth" | "fill" (depth/backlog),
// port = one protected port (default: the worst of them).
MadeSource make_accept_queue(const config::SignalConfig& cfg, const DataplaneReaders& readers) {
  ParamReader p(cfg, {"measure", "port"});
  const auto m = p.choice("measure", kMeasures, std::optional(Measure::kSojourn));
  std::optional<uint16_t> port;
  if (p.has("port")) port = static_cast<uint16_t>(p.integer("port", 0, 1, 65535));
  if (auto s = p.finish(); !s) return s.error();
  return std::unique_ptr<SignalSource>(
      std::make_unique<AcceptQueueSignal>(readers.accept_queue, m, port));
}

}  // namespace

const SignalKindDescriptor kAcceptQueueKind = {
    .meaning =
        "sojourn time of the oldest connection still waiting to be accepted (or depth, or fill). "
        "Queues come from a sock_diag dump of the listeners; a BPF iterator walks the TCP sockets "
        "for the sojourn only while a protected queue is not empty",
    .check = check_by_making<make_accept_queue>,
    .make = make_accept_queue,
};

}  // namespace edgeshed::signals
