// Accept-queue state of the protected ports: how many connections wait for
// the service to accept them and for how long the oldest has waited (its
// sojourn time, the queueing-delay signal of CoDel and DAGOR). The numbers
// come from the data plane's iterator; this class turns them into a value.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "common/queue_snapshot.h"
#include "signals/signal_kind.h"
#include "signals/signal_source.h"

namespace edgeshed::signals {

// Also spelt signals::PortQueue and signals::QueueSnapshot.
using edgeshed::PortQueue;
using edgeshed::QueueSnapshot;

class AcceptQueueSignal final : public SignalSource {
 public:
  enum class Measure {
    kSojourn,  // seconds the oldest waiting connection has waited
    kDepth,    // connections waiting
    kFill,     // depth / backlog limit, 0..1
  };

  AcceptQueueSignal(std::function<Result<QueueSnapshot>()> read, Measure measure,
                    std::optional<uint16_t> port)
      : read_(std::move(read)), measure_(measure), port_(port) {}

  Result<Sample> sample(std::chrono::nanoseconds now) override;

  // The value of one snapshot: the worst port, or the configured one.
  static double value_of(const QueueSnapshot& snapshot, Measure measure,
                         std::optional<uint16_t> port);

 private:
  std::function<Result<QueueSnapshot>()> read_;
  Measure measure_;
  std::optional<uint16_t> port_;
};

// [[signal]] kind = "accept_queue": its keys are read in accept_queue_signal.cpp.
extern const SignalKindDescriptor kAcceptQueueKind;

}  // namespace edgeshed::signals
