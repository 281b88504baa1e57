// The kernel-measured latency of the protected ports, as the daemon keeps
// it: each tick the data planes' cumulative histograms go into one window,
// with the sum over all ports beside them (port kAllPorts), which is what
// the adaptive limit learns from. Signals and the state file read the
// snapshot taken at the last update.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "common/latency_window.h"
#include "common/result.h"
#include "signals/kernel_latency_signal.h"

namespace edgeshed::daemon {

class LatencyFeed {
 public:
  // The limit's window is shorter than the signals': it must see a queue
  // build within a few ticks (tests/unit/law_capacity_test.cpp measured p90
  // over 500 ms best), while a p99 for the level wants more samples.
  static constexpr std::chrono::nanoseconds kLimitWindow = std::chrono::milliseconds(500);

  explicit LatencyFeed(std::chrono::nanoseconds window = LatencyWindow::kDefaultWindow)
      : window_(window), limit_window_(kLimitWindow) {}

  // One read per interface. A port protected on several interfaces is the
  // same sockets seen by each: the first interface's reading stands.
  void update(std::chrono::nanoseconds now,
              const std::vector<Result<std::vector<PortLatency>>>& per_interface);

  // As of the last update, or why there is none.
  Result<signals::LatencySnapshot> snapshot() const;

  // What the capacity limit learns from: the response time of all protected
  // ports over kLimitWindow (p90) and the responses of the last tick; empty
  // when nothing was read or nothing completed.
  std::optional<LatencyStats> limit_input() const;

 private:
  LatencyWindow window_;
  LatencyWindow limit_window_;
  signals::LatencySnapshot snapshot_;
  std::string error_ = "no latency read yet";
};

}  // namespace edgeshed::daemon
