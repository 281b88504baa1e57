// One tick of the daemon, every daemon.tick: expire the operator's changes,
// read the data plane, sample the signals, run the control law, write the
// policy (and the mode, when it changed) to every interface, and hand the
// outcome to the publisher. Its inputs are interfaces, so that it is tested
// on fakes (tests/unit/daemon_tick_test.cpp); the daemon wires the real ones.
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "config/config.h"
#include "daemon/dataplane_access.h"
#include "daemon/idle_reclaimer.h"
#include "daemon/latency_feed.h"
#include "daemon/log_limiter.h"
#include "daemon/runtime_changes_keeper.h"
#include "daemon/wall_clock.h"
#include "law/clock.h"
#include "law/control_law.h"
#include "signals/signal_set.h"

namespace edgeshed::daemon {

// The data plane's counts, summed over interfaces, read once per tick for
// the law and for the signals that report them.
struct DataplaneSnapshot {
  // Requests in service; the peaks and connections below are read with it
  // (zero when it is an error).
  Result<ClassCounts> inflight = ClassCounts{};
  ClassCounts peak_inflight{};
  ClassCounts connections{};
  ClassCounts inflight_age_ns{};                    // the sum of the ages of those in service
  std::array<bool, EDGESHED_NUM_CLASSES> queued{};  // the queue gates' evidence
  Result<edgeshed_stats> stats = edgeshed_stats{};
  std::vector<std::pair<std::string, edgeshed_stats>> per_interface;  // for metrics
};

// What one tick decided and saw, for the state file, level file and metrics.
struct TickOutcome {
  const law::Decision& decision;
  const std::vector<signals::SignalState>& signals;
  const DataplaneSnapshot& dataplane;
  const signals::LatencySnapshot* latency;  // null when none was read
  std::vector<std::string> interfaces;
  std::chrono::nanoseconds now;
  WallTime wall_now;
  std::chrono::nanoseconds level_since;
};

class TickPublisher {
 public:
  virtual ~TickPublisher() = default;
  // Its own errors are its to log: the tick goes on regardless.
  virtual void publish(const TickOutcome& outcome) = 0;
};

// The config fields the tick itself reads; the rest reaches it through the
// law, the signals and the publisher.
struct TickSettings {
  std::string latency_signal;  // empty: the kernel's latency feeds the limit
  std::chrono::nanoseconds salt_rotation{0};
  uint32_t max_connections = 0;  // 0: no connection cap
  bool reclaims = false;         // a port reclaims idle connections
  bool writes_mode = true;       // false: another tick writes the data plane's mode

  static TickSettings from(const config::Config& cfg) {
    const bool reclaims = std::any_of(cfg.ports.begin(), cfg.ports.end(), [](const auto& p) {
      return p.keepalive != EDGESHED_REQUESTS_PASS;
    });
    return {cfg.latency_signal, cfg.dataplane.salt_rotation, cfg.max_connections, reclaims, true};
  }
};

struct TickClocks {
  const law::Clock& steady;  // the law's, and the heartbeat's (CLOCK_MONOTONIC)
  const WallClock& wall;     // the operator's expiry times
};

struct TickReport {
  law::Decision decision;
  // This tick's failed reads and writes; each is also logged, rate-limited.
  std::vector<std::string> errors;
};

class Tick {
 public:
  // All references must outlive the tick.
  Tick(DataplaneAccess& dataplane, TickClocks clocks, law::ControlLaw& law,
       RuntimeChangesKeeper& changes, TickPublisher& publisher, TickSettings settings);
  // The signals' readers point into the tick.
  Tick(const Tick&) = delete;
  Tick& operator=(const Tick&) = delete;

  // Where signals that read the data plane get this tick's numbers.
  signals::SignalSet::DataplaneReaders readers();
  // At start and at a reload; signals built with readers().
  void replace_signals(signals::SignalSet signals, TickSettings settings);
  // Once attached, before the first tick: the counters' baseline, the salt.
  void begin();
  TickReport run();

  // The data plane's config map was rewritten: write the mode again.
  void rewrite_mode() { mode_written_ = EDGESHED_NUM_MODES; }
  // At stop with on_exit = fail_open: admit everything now rather than
  // after the heartbeat timeout.
  void admit_all();

  const signals::SignalSet& signals() const { return signals_; }

 private:
  DataplaneSnapshot read_dataplane() const;
  law::TickInputs inputs(std::chrono::nanoseconds now, std::vector<std::string>& errors);
  Status write_mode(size_t i, uint32_t mode) const;
  void write_dataplane(const law::Decision& d, std::chrono::nanoseconds now,
                       std::vector<std::string>& errors);
  void log_signal_changes();
  void report(const std::string& key, const std::string& message, std::chrono::nanoseconds now,
              std::vector<std::string>& errors);

  DataplaneAccess& dataplane_;
  TickClocks clocks_;
  law::ControlLaw& law_;
  RuntimeChangesKeeper& changes_;
  TickPublisher& publisher_;
  TickSettings settings_;
  signals::SignalSet signals_;
  DataplaneSnapshot snapshot_;
  LatencyFeed latency_;
  edgeshed_stats last_stats_{};  // of the previous tick, for shed deltas
  std::vector<bool> was_stale_;
  std::vector<std::string> last_error_;
  uint32_t adaptive_limit_ = 0;  // of the last decision, for the limit signal
  uint64_t generation_ = 0;
  uint32_t salt_ = 0;
  std::chrono::nanoseconds salt_rotated_{0};
  uint32_t mode_written_ = EDGESHED_NUM_MODES;  // none yet
  uint32_t mode_logged_ = EDGESHED_NUM_MODES;
  std::chrono::nanoseconds level_since_{0};
  LogLimiter errors_{std::chrono::seconds(10)};
  IdleReclaimer reclaimer_{dataplane_, law::IdleReclaimConfig{}};
};

}  // namespace edgeshed::daemon
