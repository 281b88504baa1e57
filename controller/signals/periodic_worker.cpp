#include "signals/periodic_worker.h"

#include <algorithm>

namespace edgeshed::signals {

PeriodicWorker::PeriodicWorker(std::chrono::nanoseconds interval, Job job)
    // A zero interval would spin; config validation keeps it far above this.
    : interval_(std::max<std::chrono::nanoseconds>(interval, std::chrono::milliseconds(1))),
      job_(std::move(job)),
      thread_([this] { run(); }) {}

PeriodicWorker::~PeriodicWorker() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  canceller_.cancel();
  thread_.join();
}

Result<Sample> PeriodicWorker::latest(std::chrono::nanoseconds now) const {
  std::lock_guard lock(mutex_);
  if (error_) return make_error(*error_);
  if (!value_) return make_error("no result yet: the first round is under way");
  auto age = std::chrono::steady_clock::now() - value_at_;
  return Sample{*value_, now - std::chrono::duration_cast<std::chrono::nanoseconds>(age)};
}

uint64_t PeriodicWorker::rounds() const {
  std::lock_guard lock(mutex_);
  return rounds_;
}

void PeriodicWorker::run() {
  auto next = std::chrono::steady_clock::now();
  for (;;) {
    Result<double> result = job_(canceller_.fd());
    const auto done = std::chrono::steady_clock::now();
    std::unique_lock lock(mutex_);
    if (stopping_) return;  // the round was cut short; its outcome means nothing
    ++rounds_;
    if (result) {
      value_ = *result;
      value_at_ = done;
      error_.reset();
    } else {
      error_ = result.error().message;
    }
    // A round that overran skips the missed starts rather than running them
    // back to back: the schedule keeps its phase.
    do {
      next += interval_;
    } while (next <= done);
    if (wake_.wait_until(lock, next, [this] { return stopping_; })) return;
  }
}

}  // namespace edgeshed::signals
