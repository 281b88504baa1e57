#include "daemon/state_refresh.h"

#include <algorithm>

namespace edgeshed::daemon {
namespace {

// Runtime changes without the time each has left.
ipc::ActiveChanges untimed(ipc::ActiveChanges c) {
  for (auto* change : {&c.mode, &c.action, &c.level}) {
    if (*change) (*change)->left_s.reset();
  }
  for (auto& cls : c.classes) cls.left_s.reset();
  return c;
}

// Equal in everything but what moves every tick: the clock, pressure and
// its drivers, signal values, latency and the time left on changes.
bool same_decision(const ipc::State& a, const ipc::State& b) {
  return a.pid == b.pid && a.config == b.config && a.tick_ms == b.tick_ms && a.level == b.level &&
         a.level_since_ms == b.level_since_ms && a.level_pinned == b.level_pinned &&
         a.mode == b.mode && a.fail_open == b.fail_open && a.all_stale == b.all_stale &&
         a.adaptive_limit == b.adaptive_limit && a.interfaces == b.interfaces &&
         a.classes == b.classes && a.metrics == b.metrics &&
         ((a.runtime_changes.empty() && b.runtime_changes.empty()) ||
          untimed(a.runtime_changes) == untimed(b.runtime_changes));
}

}  // namespace

bool StateRefresh::due(const ipc::State& state, std::chrono::nanoseconds now,
                       std::chrono::nanoseconds tick) const {
  const auto refresh = std::max<std::chrono::nanoseconds>(tick, kStateRefresh);
  return !written_ || now - written_at_ >= refresh || !same_decision(state, *written_);
}

void StateRefresh::written(const ipc::State& state, std::chrono::nanoseconds now) {
  written_ = state;
  written_at_ = now;
}

}  // namespace edgeshed::daemon
