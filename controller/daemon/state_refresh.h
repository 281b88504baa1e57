// When the daemon rewrites its state file. What an operator acts on (level,
// mode, limits, policies, runtime changes, interfaces) is written the tick it
// changes; what moves every tick (the clock, pressure, signal values,
// latency, time left on a change) at most once a refresh interval. A
// rewrite every tick was the largest part of the daemon's CPU.
#pragma once

#include <chrono>
#include <optional>

#include "ipc/state.h"

namespace edgeshed::daemon {

// A reader takes a daemon whose state is older than this as hung only well
// after it (cli/daemon_health.h: at least 2 s).
inline constexpr std::chrono::seconds kStateRefresh{1};

class StateRefresh {
 public:
  // Whether this state must be written now, given the daemon's tick (a
  // slower tick than kStateRefresh writes every tick).
  bool due(const ipc::State& state, std::chrono::nanoseconds now, std::chrono::nanoseconds tick);
  // After a successful write: a failed one stays due. `state` is the one
  // due() last found due, whose settled copy it keeps; without such a due()
  // it is settled here.
  void written(const ipc::State& state, std::chrono::nanoseconds now);

 private:
  std::optional<ipc::State> written_;  // settled: without its moving parts
  // What due() settled, for written(): a writing tick copies the state once.
  std::optional<ipc::State> due_;
  std::chrono::nanoseconds written_at_{0};
};

}  // namespace edgeshed::daemon
