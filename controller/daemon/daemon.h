// edgeshed run: attaches (or adopts) the data plane of each configured
// interface, then every tick samples the signals, runs the control law and
// publishes the policy and a heartbeat. SIGHUP reloads the config,
// SIGTERM/SIGINT stop as `on_exit` says. The daemon only wires its units
// together and runs the event loop.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/fd.h"
#include "common/result.h"
#include "config/config.h"
#include "daemon/attached_dataplane.h"
#include "daemon/learnt_keeper.h"
#include "daemon/log_limiter.h"
#include "daemon/publisher.h"
#include "daemon/run_dir_lock.h"
#include "daemon/runtime_changes_keeper.h"
#include "daemon/service_notify.h"
#include "daemon/service_tick.h"
#include "daemon/steady_clock.h"
#include "daemon/tick.h"
#include "daemon/wall_clock.h"
#include "dataplane/local_route_watch.h"
#include "ipc/control_socket.h"
#include "law/control_law.h"

namespace edgeshed::daemon {

// Where `edgeshed run` was told to keep its run directory: from the command
// line (or EDGESHED_RUN_DIR), which wins over the config's daemon.run_dir;
// otherwise the default, used only while the config cannot say.
struct RunDirChoice {
  std::string path;
  bool from_command_line = false;
};

class Daemon {
  // Only start() makes a daemon: it must not move (callbacks hold `this`).
  struct Key {
    explicit Key() = default;
  };

 public:
  // A start that fails is recorded in the run directory (the one chosen,
  // else the config's) for `edgeshed status`.
  static Result<std::unique_ptr<Daemon>> start(const std::string& config_path,
                                               const RunDirChoice& run_dir_choice);

  Daemon(Key key, std::string config_path, config::Config config, RunDirLock run_dir);
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Ticks until SIGTERM or SIGINT; returns the exit code.
  int run();

 private:
  // The rest of start(), once the run directory is this daemon's.
  Status start_locked();
  // After attaching: metrics, the agent, the operator's changes, the control socket, the tick.
  Status start_serving();
  // Hands the operator's changes to the law and the data plane.
  void apply_runtime_changes(const RuntimeChanges& changes);
  void reload();
  void refuse_reload(const std::string& why);
  void stop();
  // After a tick, and at a clean stop: what the limit learnt, to the state directory.
  void keep_learnt(const std::optional<law::Knowledge>& knowledge, bool now_or_never = false);
  // The host's routes changed: its destinations follow.
  void refresh_destinations();
  // After a tick: the services' namespaces that came, went or were replaced.
  void follow_namespaces();
  // A tick for each service of its own the data plane has now, then theirs.
  void run_service_ticks();

  std::string config_path_;
  config::Config config_;
  RunDirLock run_dir_;
  // A reload keeps the command line's run directory, as the start did.
  bool run_dir_from_command_line_ = false;
  std::vector<Fd> interface_locks_;
  SteadyClock clock_;
  SystemWallClock wall_;
  ServiceNotifier notifier_;
  RuntimeChangesKeeper changes_;
  AttachedDataplane dataplane_;
  std::unique_ptr<law::ControlLaw> law_;
  Publisher publisher_;
  Tick tick_;
  // The ticks of the services of their own, by id; run before tick_, whose
  // publish writes their policies with its own.
  std::map<uint32_t, std::unique_ptr<ServiceTick>> service_ticks_;
  LearntKeeper learnt_;
  std::optional<ipc::ControlServer> control_;
  // Opened before the attach reads the routes, so no change falls between.
  std::optional<LocalRouteWatch> routes_;
  LogLimiter namespace_errors_{std::chrono::seconds(10)};
};

}  // namespace edgeshed::daemon
