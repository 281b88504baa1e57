#include "daemon/state_refresh.h"

#include <algorithm>

namespace edgeshed::daemon {
namespace {

// The state without what moves every tick: the clock, pressure and its
// drivers, signal values, latency and the time left on changes. Whatever
// else State holds, a field added later included, is a decision.
ipc::State settled(const ipc::State& state) {
  ipc::State s = state;
  s.monotonic_ms = 0;
  s.pressure.reset();
  s.drivers.clear();
  s.signals.clear();
  s.latency.reset();
  for (auto* change : {&s.runtime_changes.mode, &s.runtime_changes.action,
                       &s.runtime_changes.level}) {
    if (*change) (*change)->left_s.reset();
  }
  for (auto& cls : s.runtime_changes.classes) cls.left_s.reset();
  return s;
}

}  // namespace

bool StateRefresh::due(const ipc::State& state, std::chrono::nanoseconds now,
                       std::chrono::nanoseconds tick) {
  const auto refresh = std::max<std::chrono::nanoseconds>(tick, kStateRefresh);
  due_ = settled(state);
  const bool due = !written_ || now - written_at_ >= refresh || *due_ != *written_;
  if (!due) due_.reset();
  return due;
}

void StateRefresh::written(const ipc::State& state, std::chrono::nanoseconds now) {
  written_ = due_ ? std::move(*due_) : settled(state);
  due_.reset();
  written_at_ = now;
}

}  // namespace edgeshed::daemon
