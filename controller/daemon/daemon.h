// edgeshed run: attaches (or adopts) the data plane of each configured
// interface, then every tick samples the signals, runs the control law and
// publishes the policy and a heartbeat. SIGHUP reloads the config,
// SIGTERM/SIGINT stop as `on_exit` says.
#pragma once

#include <array>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "config/config.h"
#include "daemon/latency_feed.h"
#include "daemon/log_limiter.h"
#include "daemon/metrics.h"
#include "daemon/metrics_server.h"
#include "daemon/runtime_changes.h"
#include "daemon/service_notify.h"
#include "daemon/steady_clock.h"
#include "dataplane/accept_queue.h"
#include "dataplane/maps.h"
#include "ipc/control_socket.h"
#include "law/control_law.h"
#include "signals/signal_set.h"

namespace edgeshed::daemon {

class Daemon {
 public:
  // A start that fails is recorded in the run directory (the config's, or
  // fallback_run_dir when the config cannot be read) for `edgeshed status`.
  static Result<std::unique_ptr<Daemon>> start(const std::string& config_path,
                                               const std::string& fallback_run_dir);

  // Ticks until SIGTERM or SIGINT; returns the exit code.
  int run();

 private:
  struct Interface {
    std::string name;
    Maps maps;
  };

  // The data plane's counts, summed over interfaces, read once per tick
  // for the law and for the signals that report them.
  struct DataplaneSnapshot {
    Result<ClassCounts> inflight = ClassCounts{};
    Result<edgeshed_stats> stats = edgeshed_stats{};
    std::vector<std::pair<std::string, edgeshed_stats>> per_interface;  // for metrics
  };

  Daemon(std::string config_path, config::Config config);
  Status lock_and_open_run_dir();
  // The rest of start(), once the run directory is this daemon's.
  Status start_locked();
  Status attach_all();
  Status apply_dataplane_settings(const config::Config& cfg);
  Status build_signals(const config::Config& cfg);
  void tick();
  void reload();
  void stop();
  void log_signal_changes();
  // The config with the operator's runtime changes applied.
  config::Config effective_config() const { return runtime_.applied_to(config_); }
  // Hands the runtime changes to the law and the data plane.
  void apply_runtime_changes();
  void load_runtime_changes();
  void save_runtime_changes();
  nlohmann::json handle_control(const nlohmann::json& request);
  void publish_metrics(const law::Decision& d);
  void write_level_file(law::Level level);
  std::string run_path(const char* name) const;
  DataplaneSnapshot read_dataplane() const;
  Result<signals::QueueSnapshot> accept_queue_snapshot();
  signals::SignalSet::DataplaneReaders readers();

  std::string config_path_;
  config::Config config_;
  Fd run_dir_lock_;
  std::vector<Fd> interface_locks_;
  std::optional<ipc::ControlServer> control_;
  std::unique_ptr<MetricsServer> metrics_;
  RuntimeChanges runtime_;
  ServiceNotifier notifier_;
  TickHistogram tick_seconds_;
  uint64_t level_changes_ = 0;
  uint64_t reloads_ok_ = 0;
  uint64_t reloads_failed_ = 0;
  std::optional<law::Level> level_file_written_;
  SteadyClock clock_;
  std::unique_ptr<law::ControlLaw> law_;
  std::optional<signals::SignalSet> signals_;
  std::vector<Interface> interfaces_;
  DataplaneSnapshot snapshot_;
  LatencyFeed latency_;
  edgeshed_stats last_stats_{};  // of the previous tick, for shed deltas
  // Opened on first use: only an accept_queue signal needs the iterator.
  std::vector<AcceptQueueReader> queue_readers_;
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
};

}  // namespace edgeshed::daemon
