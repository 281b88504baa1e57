// A measurement repeated every interval on a thread of its own, keeping the
// latest outcome, so that SignalSource::sample() never waits on the network:
// a dead or slow endpoint costs the tick loop nothing, and its signal goes
// stale instead.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "common/result.h"
#include "signals/net_io.h"
#include "signals/signal_source.h"

namespace edgeshed::signals {

class PeriodicWorker {
 public:
  // Runs on the worker thread, the first time at once. Its waits must give
  // up when cancel_fd becomes readable, which happens on destruction.
  using Job = std::function<Result<double>(int cancel_fd)>;

  PeriodicWorker(std::chrono::nanoseconds interval, Job job);
  ~PeriodicWorker();
  PeriodicWorker(const PeriodicWorker&) = delete;
  PeriodicWorker& operator=(const PeriodicWorker&) = delete;

  // The value of the latest successful round, its `taken` time being `now`
  // minus its age, so that it lands on whatever clock the caller samples
  // with. If the latest round failed, its error instead: the caller keeps
  // its last good sample, which goes stale, and shows why.
  Result<Sample> latest(std::chrono::nanoseconds now) const;

  // Rounds completed so far.
  uint64_t rounds() const;

 private:
  void run();

  const std::chrono::nanoseconds interval_;
  Job job_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  uint64_t rounds_ = 0;
  std::optional<double> value_;
  std::chrono::steady_clock::time_point value_at_;
  std::optional<std::string> error_;  // of the latest round, when it failed
  Canceller canceller_;
  std::thread thread_;  // last: starts once everything it uses exists
};

}  // namespace edgeshed::signals
