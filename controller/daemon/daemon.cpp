#include "daemon/daemon.h"

#include <poll.h>
#include <pthread.h>
#include <spdlog/spdlog.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <nlohmann/json.hpp>

#include <csignal>

#include "daemon/priority.h"
#include "daemon/reload.h"
#include "daemon/start_checks.h"
#include "daemon/state_file.h"
#include "dataplane/attach.h"
#include "ipc/run_dir.h"
#include "ipc/start_history.h"
#include "signals/signal_kinds.h"

namespace edgeshed::daemon {

using ipc::ControlServer;
using ipc::kControlSocketName;
using ipc::kRuntimeFileName;

namespace {

// The signals the tick loop takes from its signalfd. Blocked before any
// thread starts (probes and scrapes run on threads of their own), since a
// thread that left them unblocked would die of them instead.
sigset_t control_signals() {
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGHUP);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGINT);
  return mask;
}

std::vector<uint16_t> tcp_ports(const config::Config& config) {
  std::vector<uint16_t> ports;
  for (const auto& p : config.ports) {
    if (p.protocol == config::Protocol::kTcp) ports.push_back(p.port);
  }
  return ports;
}

// A start refused before it took the run directory's lock is recorded
// (`edgeshed status` says why the daemon is not running) only when it can
// take the lock: a config refused while a healthy daemon runs there is no
// start of that daemon, and must not make it look crash-looping.
Error refused_start(const std::string& run_dir, const Error& why) {
  auto lock = RunDirLock::lock(run_dir);
  if (!lock) {
    return make_error(why.message + " (not recorded as a start: " + lock.error().message +
                      "; `edgeshed check --config FILE` checks a config without starting)");
  }
  lock->record_start_failure(why.message);
  return why;
}

// Every port the config protects, whatever its protocol.
std::vector<uint16_t> all_ports(const config::Config& config) {
  std::vector<uint16_t> ports;
  for (const auto& p : config.ports) ports.push_back(p.port);
  return ports;
}

int64_t unix_ms(WallTime t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

}  // namespace

Daemon::Daemon(Key /*key*/, std::string config_path, config::Config config, RunDirLock run_dir)
    : config_path_(std::move(config_path)),
      config_(std::move(config)),
      run_dir_(std::move(run_dir)),
      changes_(run_dir_.path(kRuntimeFileName), wall_,
               [this](const RuntimeChanges& c) { apply_runtime_changes(c); }),
      law_(std::make_unique<law::LevelControlLaw>(config_.law_config(), clock_)),
      publisher_(config_, config_path_, clock_, changes_, notifier_, dataplane_.namespaces()),
      tick_(dataplane_, {clock_, wall_}, *law_, changes_, publisher_, TickSettings::from(config_)),
      learnt_(tcp_ports(config_)) {
  changes_.set_critical_floor(config_.critical_floor);
  changes_.set_config_ports(all_ports(config_));
}

Result<std::unique_ptr<Daemon>> Daemon::start(const std::string& config_path,
                                              const RunDirChoice& run_dir_choice) {
  const sigset_t mask = control_signals();
  pthread_sigmask(SIG_BLOCK, &mask, nullptr);
  auto cfg = signals::load_config(config_path);
  if (!cfg) {
    // Without a config there is no run directory of its own: the failure
    // goes where `edgeshed status` looks, the one named or the default.
    return refused_start(run_dir_choice.path, cfg.error());
  }
  // The operator's --run-dir wins over the file: nothing is written elsewhere.
  if (run_dir_choice.from_command_line) cfg->daemon.run_dir = run_dir_choice.path;
  // Refused like a config that does not parse: before the lock and the
  // kernel, recorded for `edgeshed status`.
  if (auto s = check_config_can_start(*cfg, config_path); !s) {
    return refused_start(cfg->daemon.run_dir, s.error());
  }
  // A second daemon refused by the lock is not a start of this run directory.
  auto run_dir = RunDirLock::lock(cfg->daemon.run_dir);
  if (!run_dir) return run_dir.error();
  run_dir->record_start();
  auto d = std::make_unique<Daemon>(Key{}, config_path, std::move(*cfg), std::move(*run_dir));
  d->run_dir_from_command_line_ = run_dir_choice.from_command_line;
  if (auto s = d->start_locked(); !s) {
    d->run_dir_.record_start_failure(s.error().message);
    return s.error();
  }
  return d;
}

Status Daemon::start_locked() {
  spdlog::set_level(spdlog::level::from_str(config_.daemon.log_level));
  // Before any thread starts: threads inherit the nice value of their creator.
  if (auto nice = raise_priority(config_.daemon.nice); !nice) {
    spdlog::warn("{}; under CPU starvation the tick may lag and the data plane fail open",
                 nice.error().message);
  } else {
    spdlog::info("scheduling priority: nice {}", *nice);
  }
  // Everything that can be refused is checked before the kernel is touched.
  auto signals = signals::SignalSet::build(config_.signals, tick_.readers());
  if (!signals) return signals.error();
  tick_.replace_signals(std::move(*signals), TickSettings::from(config_));
  for (const auto& iface : config_.interfaces) {
    auto lock = lock_interface(iface.name);
    if (!lock) return lock.error();
    interface_locks_.push_back(std::move(*lock));
  }
  auto routes = LocalRouteWatch::open();
  if (!routes) return routes.error();
  routes_.emplace(std::move(*routes));
  changes_.load();
  if (auto s = dataplane_.attach_all(config_, changes_.applied_to(config_)); !s) return s;
  // A start that fails from here on leaves no filter or pin it made.
  if (auto s = start_serving(); !s) {
    dataplane_.detach_fresh();
    return s;
  }
  return {};
}

Status Daemon::start_serving() {
  if (auto s = publisher_.serve_metrics(); !s) return s;
  if (auto s = publisher_.serve_agent(); !s) return s;
  changes_.apply();
  auto control = ControlServer::listen(run_dir_.path(kControlSocketName));
  if (!control) return control.error();
  control_.emplace(std::move(*control));
  if (auto knowledge = learnt_.load(config_.daemon.effective_state_dir(), unix_ms(wall_.now()))) {
    law_->warm_start(*knowledge);
  }
  tick_.begin();
  return {};
}

void Daemon::keep_learnt(const std::optional<law::Knowledge>& knowledge, bool now_or_never) {
  learnt_.keep(knowledge, config_.daemon.effective_state_dir(), clock_.now(), unix_ms(wall_.now()),
               now_or_never);
}

void Daemon::apply_runtime_changes(const RuntimeChanges& changes) {
  law_->set_overrides(changes.law_overrides(wall_.now(), clock_.now()));
  if (auto s = dataplane_.apply_settings(changes.applied_to(config_)); !s) {
    spdlog::error("data plane settings not fully applied: {}", s.error().message);
    return;
  }
  tick_.rewrite_mode();
}

void Daemon::refresh_destinations() {
  if (!routes_->drain()) return;
  if (auto s = dataplane_.refresh_destinations(config_.dataplane.destinations); !s) {
    spdlog::error("the host's routes changed, its destinations not followed: {}",
                  s.error().message);
  }
}

void Daemon::follow_namespaces() {
  const bool any = std::any_of(config_.ports.begin(), config_.ports.end(),
                               [](const config::PortConfig& p) { return p.netns.has_value(); });
  if (!any) return;
  if (auto s = dataplane_.follow_namespaces(changes_.applied_to(config_)); !s) {
    namespace_errors_.error(
        "namespaces", "the services' namespaces not followed: " + s.error().message, clock_.now());
  }
}

void Daemon::run_service_ticks() {
  const std::vector<uint32_t> ids = dataplane_.services();
  std::erase_if(service_ticks_, [&ids](const auto& entry) {
    return std::find(ids.begin(), ids.end(), entry.first) == ids.end();
  });
  for (uint32_t id : ids) {
    auto& tick = service_ticks_[id];
    if (!tick) {
      tick = std::make_unique<ServiceTick>(dataplane_, id, config_, TickClocks{clock_, wall_},
                                           changes_);
    }
    (void)tick->tick.run();  // errors logged by the tick
  }
}

void Daemon::refuse_reload(const std::string& why) {
  publisher_.count_reload(false);
  spdlog::error("reload refused, keeping the running config: {}", why);
  notifier_.ready("reload refused");
}

void Daemon::reload() {
  notifier_.reloading();
  auto cfg = signals::load_config(config_path_);
  if (!cfg) {
    refuse_reload(cfg.error().message);
    return;
  }
  if (run_dir_from_command_line_) cfg->daemon.run_dir = config_.daemon.run_dir;
  if (auto s = check_config_can_start(*cfg, config_path_); !s) {
    refuse_reload(s.error().message);
    return;
  }
  ReloadPlan plan = plan_reload(std::move(*cfg), config_);
  for (const auto& deferred : plan.deferred) spdlog::warn("reload: {}", deferred);
  // Build everything that can fail before changing anything.
  auto signals = signals::SignalSet::build(plan.config.signals, tick_.readers());
  if (!signals) {
    refuse_reload(signals.error().message);
    return;
  }
  if (auto s = dataplane_.apply_settings(changes_.applied_to(plan.config)); !s) {
    spdlog::error("reload: data plane settings not fully applied: {}", s.error().message);
  } else {
    tick_.rewrite_mode();
  }
  tick_.replace_signals(std::move(*signals), TickSettings::from(plan.config));
  law_->reconfigure(plan.config.law_config());
  for (const auto& entry : service_ticks_) {
    entry.second->law.reconfigure(service_law_config(plan.config));
  }
  changes_.set_critical_floor(plan.config.critical_floor);
  changes_.set_config_ports(all_ports(plan.config));
  spdlog::set_level(spdlog::level::from_str(plan.config.daemon.log_level));
  config_ = std::move(plan.config);
  learnt_.set_ports(tcp_ports(config_));
  publisher_.count_reload(true);
  spdlog::info("reloaded {}", config_path_);
  notifier_.ready("reloaded");
}

void Daemon::stop() {
  notifier_.stopping();
  keep_learnt(law_->limit_knowledge(), /*now_or_never=*/true);
  publisher_.withdraw();
  run_dir_.forget_starts();
  if (config_.daemon.on_exit == config::OnExit::kDetach) {
    dataplane_.detach_all();
  } else {
    dataplane_.forget_service_policies();
    tick_.admit_all();
  }
}

int Daemon::run() {
  const sigset_t mask = control_signals();
  Fd sigfd(signalfd(-1, &mask, SFD_CLOEXEC));
  Fd timer(timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC));
  if (!sigfd.valid() || !timer.valid()) {
    spdlog::error("cannot create the tick timer or signal fd");
    return 1;
  }
  auto arm = [&] {
    itimerspec its{};
    auto tick = config_.daemon.tick.count();
    its.it_interval.tv_sec = tick / 1000000000;
    its.it_interval.tv_nsec = tick % 1000000000;
    its.it_value = its.it_interval;
    timerfd_settime(timer.get(), 0, &its, nullptr);
  };
  arm();
  spdlog::info("running: {} interface(s), {} signal(s), tick {} ms", dataplane_.interface_count(),
               config_.signals.size(),
               std::chrono::duration_cast<std::chrono::milliseconds>(config_.daemon.tick).count());
  run_service_ticks();
  (void)tick_.run();  // errors logged by the tick
  notifier_.ready("running");
  for (;;) {
    pollfd fds[4] = {{timer.get(), POLLIN, 0},
                     {sigfd.get(), POLLIN, 0},
                     {control_->fd(), POLLIN, 0},
                     {routes_->fd(), POLLIN, 0}};
    if (poll(fds, 4, -1) < 0) continue;
    if (fds[3].revents & POLLIN) refresh_destinations();
    if (fds[2].revents & POLLIN) {
      control_->serve_one([this](const nlohmann::json& r) { return changes_.handle(r); });
    }
    if (fds[1].revents & POLLIN) {
      signalfd_siginfo si{};
      if (read(sigfd.get(), &si, sizeof(si)) == sizeof(si)) {
        if (si.ssi_signo == SIGHUP) {
          reload();
          arm();
        } else {
          spdlog::info("stopping on {}", si.ssi_signo == SIGTERM ? "SIGTERM" : "SIGINT");
          stop();
          return 0;
        }
      }
    }
    if (fds[0].revents & POLLIN) {
      uint64_t expirations = 0;
      (void)read(timer.get(), &expirations, sizeof(expirations));
      follow_namespaces();
      run_service_ticks();
      keep_learnt(tick_.run().decision.limit_knowledge);
    }
  }
}

}  // namespace edgeshed::daemon
