#include "daemon/daemon.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/file.h>
#include <spdlog/spdlog.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include "common/fd.h"
#include "common/stats.h"
#include "daemon/policy_writer.h"
#include "daemon/priority.h"
#include "daemon/state_file.h"
#include "dataplane/attach.h"
#include "ipc/run_dir.h"
#include "ipc/start_history.h"

namespace edgeshed::daemon {

using ipc::ControlServer;
using ipc::forget_start_history;
using ipc::kControlSocketName;
using ipc::kLevelFileName;
using ipc::kRuntimeFileName;
using ipc::kStateFileName;
using ipc::make_run_dir;
using ipc::record_start;
using ipc::record_start_failure;
using ipc::remove_file;
using ipc::write_file_atomically;

namespace {

uint32_t fresh_salt() {
  static std::random_device rd;
  return rd();
}

// "inflight=14.0/10 (1.40)" for each reading, stale ones marked.
std::string describe(const std::vector<law::SignalReading>& readings) {
  std::ostringstream out;
  for (const auto& r : readings) {
    if (out.tellp() > 0) out << ", ";
    out << r.name << "=" << r.value << "/" << r.target;
    if (r.stale) {
      out << " (stale)";
    } else if (r.target > 0) {
      out << " (" << r.value / r.target << ")";
    }
  }
  return out.str();
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ",") + n;
  return out.empty() ? "none" : out;
}

}  // namespace

Daemon::Daemon(std::string config_path, config::Config config)
    : config_path_(std::move(config_path)), config_(std::move(config)) {}

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

}  // namespace

Result<std::unique_ptr<Daemon>> Daemon::start(const std::string& config_path,
                                              const std::string& fallback_run_dir) {
  const sigset_t mask = control_signals();
  pthread_sigmask(SIG_BLOCK, &mask, nullptr);
  auto cfg = config::load_config(config_path);
  if (!cfg) {
    // Without a config there is no run directory of its own: the failure
    // goes where `edgeshed status` looks by default.
    if (make_run_dir(fallback_run_dir)) (void)record_start(fallback_run_dir, cfg.error().message);
    return cfg.error();
  }
  std::unique_ptr<Daemon> d(new Daemon(config_path, std::move(*cfg)));  // private ctor
  // A second daemon refused by the lock is not a start of this run directory.
  if (auto s = d->lock_and_open_run_dir(); !s) return s.error();
  if (auto s = record_start(d->config_.daemon.run_dir); !s) spdlog::warn("{}", s.error().message);
  if (auto s = d->start_locked(); !s) {
    (void)record_start_failure(d->config_.daemon.run_dir, s.error().message);
    return s.error();
  }
  return d;
}

Status Daemon::start_locked() {
  if (config_.interfaces.empty()) return make_error(config_path_ + ": no [[interface]] configured");
  spdlog::set_level(spdlog::level::from_str(config_.daemon.log_level));
  // Before any thread starts: threads inherit the nice value of their creator.
  if (auto nice = raise_priority(config_.daemon.nice); !nice) {
    spdlog::warn("{}; under CPU starvation the tick may lag and the data plane fail open",
                 nice.error().message);
  } else {
    spdlog::info("scheduling priority: nice {}", *nice);
  }
  // Everything that can be refused is checked before the kernel is touched.
  if (auto s = build_signals(config_); !s) return s;
  for (const auto& iface : config_.interfaces) {
    auto lock = lock_interface(iface.name);
    if (!lock) return lock.error();
    interface_locks_.push_back(std::move(*lock));
  }
  load_runtime_changes();
  if (auto s = attach_all(); !s) return s;
  if (config_.metrics.enabled) {
    auto m = MetricsServer::start(config_.metrics.address, config_.metrics.port);
    if (!m) return m.error();
    metrics_ = std::move(*m);
  }
  law_ = std::make_unique<law::LevelControlLaw>(config_.law_config(), clock_);
  apply_runtime_changes();
  auto control = ControlServer::listen(run_path(kControlSocketName));
  if (!control) return control.error();
  control_.emplace(std::move(*control));
  salt_ = fresh_salt();
  salt_rotated_ = clock_.now();
  level_since_ = clock_.now();
  return {};
}

std::string Daemon::run_path(const char* name) const {
  return config_.daemon.run_dir + "/" + name;
}

// One daemon per run directory: its state file, level file and socket.
Status Daemon::lock_and_open_run_dir() {
  if (auto s = make_run_dir(config_.daemon.run_dir); !s) return s;
  const std::string path = run_path("daemon.lock");
  run_dir_lock_ = Fd(open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (!run_dir_lock_.valid()) return make_error("cannot open " + path + ": " + std::strerror(errno));
  if (flock(run_dir_lock_.get(), LOCK_EX | LOCK_NB) != 0) {
    return make_error("another edgeshed daemon is running with run directory " +
                      config_.daemon.run_dir + " (it holds " + path +
                      "); stop it first, `edgeshed status` shows it");
  }
  return {};
}

void Daemon::load_runtime_changes() {
  const std::string path = run_path(kRuntimeFileName);
  std::ifstream in(path);
  if (!in) return;  // none saved
  auto j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  auto changes = j.is_discarded() ? Result<RuntimeChanges>(make_error("not JSON"))
                                  : RuntimeChanges::from_json(j);
  if (!changes) {
    // Kept for the operator to read; starting without them is safer than
    // not starting at all.
    const std::string kept = path + ".invalid";
    if (std::rename(path.c_str(), kept.c_str()) != 0) {
      spdlog::error("runtime changes in {} ignored ({}); left in place, cannot move to {}: {}", path,
                    changes.error().message, kept, std::strerror(errno));
    } else {
      spdlog::error("runtime changes in {} ignored ({}); moved to {}", path, changes.error().message,
                    kept);
    }
    return;
  }
  runtime_ = std::move(*changes);
  for (const auto& e : runtime_.expire(std::chrono::system_clock::now())) {
    spdlog::info("operator: {} while the daemon was down", e);
  }
  if (!runtime_.empty()) {
    spdlog::info("operator changes kept from before the restart: {}",
                 ipc::to_json(runtime_.describe(std::chrono::system_clock::now())).dump());
  }
}

void Daemon::save_runtime_changes() {
  const std::string path = run_path(kRuntimeFileName);
  if (runtime_.empty()) {
    if (auto s = remove_file(path); !s) {
      spdlog::error("{}: a restart would bring back the cleared changes", s.error().message);
    }
    return;
  }
  if (auto s = write_file_atomically(path, runtime_.to_json().dump(1) + "\n", 0600); !s) {
    spdlog::error("runtime changes not saved, a restart would lose them: {}", s.error().message);
  }
}

void Daemon::apply_runtime_changes() {
  law_->set_overrides(runtime_.law_overrides(std::chrono::system_clock::now(), clock_.now()));
  if (auto s = apply_dataplane_settings(effective_config()); !s) {
    spdlog::error("data plane settings not fully applied: {}", s.error().message);
  }
}

nlohmann::json Daemon::handle_control(const nlohmann::json& request) {
  auto parsed = ipc::parse_request(request);
  if (parsed && std::holds_alternative<ipc::PingRequest>(*parsed)) {
    return ipc::to_json(ipc::Reply::pong(getpid()));
  }
  auto changed = parsed ? runtime_.apply(*parsed, std::chrono::system_clock::now())
                        : Result<std::string>(parsed.error());
  if (!changed) {
    spdlog::warn("operator request refused: {} ({})", changed.error().message, request.dump());
    return ipc::to_json(ipc::Reply::failure(changed.error().message));
  }
  spdlog::info("operator: {}", *changed);
  save_runtime_changes();
  apply_runtime_changes();
  // In force from the next tick: an extra tick here would count towards the
  // law's dwell times.
  return ipc::to_json(ipc::Reply::success(*changed));
}

Status Daemon::attach_all() {
  const config::Config effective = effective_config();
  for (const auto& iface : config_.interfaces) {
    AttachOptions opts;
    opts.iface = iface.name;
    opts.hook = static_cast<uint32_t>(iface.hook);
    opts.mode = static_cast<uint32_t>(config_.dataplane.mode);
    opts.action = static_cast<uint32_t>(effective.dataplane.action);
    opts.draw = static_cast<uint32_t>(config_.dataplane.draw);
    opts.heartbeat_timeout_ns = static_cast<uint64_t>(config_.daemon.heartbeat_timeout.count());
    opts.rst_per_sec_per_cpu = config_.dataplane.rst_per_sec_per_cpu;
    opts.events_per_sec_per_cpu = config_.dataplane.events_per_sec_per_cpu;
    opts.event_sample = config_.dataplane.event_sample;
    auto attached = attach(opts);
    if (!attached) return make_error(iface.name + ": " + attached.error().message);
    spdlog::info("{} {} at {}", attached->adopted ? "adopted the data plane on" : "attached to",
                 iface.name, hook_name(opts.hook));
    interfaces_.push_back({iface.name, std::move(attached->maps)});
  }
  if (auto stats = read_dataplane().stats; stats) last_stats_ = *stats;
  return apply_dataplane_settings(effective);
}

// Ports, prefixes and the rarely changing config fields, on every interface.
Status Daemon::apply_dataplane_settings(const config::Config& cfg) {
  std::vector<PortClass> ports;
  for (const auto& p : cfg.ports) ports.push_back({p.port, static_cast<uint32_t>(p.traffic_class)});
  for (auto& iface : interfaces_) {
    auto& maps = iface.maps;
    if (auto s = maps.set_ports(ports); !s) return s;
    // Prefixes are cleared then set: for a moment a source may fall back to
    // its port's class. Reloads are rare; a torn trie never happens.
    if (auto s = maps.clear_prefixes(); !s) return s;
    for (const auto& p : cfg.prefixes) {
      if (auto s = maps.set_prefix(p.prefix, static_cast<uint32_t>(p.traffic_class)); !s) return s;
    }
    // A probe must measure the service, not be shed by it: its source is
    // critical (a probe without `source` uses the host's own address, which
    // reaches a local service over loopback, past the shedder).
    for (const auto& sig : cfg.signals) {
      if (sig.kind != config::SignalKind::kProbe) continue;
      auto source = sig.params["source"].value<std::string>();
      if (!source) continue;
      bool v6 = source->find(':') != std::string::npos;
      auto prefix = config::parse_ip_prefix(*source + (v6 ? "/128" : "/32"));
      if (!prefix) return make_error(sig.locate("source") + ": " + prefix.error().message);
      if (auto s = maps.set_prefix(*prefix, EDGESHED_CLASS_CRITICAL); !s) return s;
    }
    auto dp = maps.read_config();
    if (!dp) return dp.error();
    dp->action = static_cast<uint32_t>(cfg.dataplane.action);
    dp->draw = static_cast<uint32_t>(cfg.dataplane.draw);
    dp->rst_per_sec_per_cpu = cfg.dataplane.rst_per_sec_per_cpu;
    dp->events_per_sec_per_cpu = cfg.dataplane.events_per_sec_per_cpu;
    dp->event_sample = cfg.dataplane.event_sample;
    dp->heartbeat_timeout_ns = static_cast<uint64_t>(cfg.daemon.heartbeat_timeout.count());
    if (auto s = maps.write_config(*dp); !s) return s;
  }
  mode_written_ = EDGESHED_NUM_MODES;  // rewrite the mode at the next tick
  return {};
}

signals::SignalSet::DataplaneReaders Daemon::readers() {
  signals::SignalSet::DataplaneReaders r;
  r.inflight_total = [this]() -> Result<double> {
    if (!snapshot_.inflight) return snapshot_.inflight.error();
    double total = 0;
    for (uint64_t c : *snapshot_.inflight) total += static_cast<double>(c);
    return total;
  };
  r.accept_queue = [this] { return accept_queue_snapshot(); };
  r.stats = [this] { return snapshot_.stats; };
  r.limit_use = [this]() -> Result<signals::LimitUse> {
    if (!snapshot_.inflight) return snapshot_.inflight.error();
    // Critical traffic has a floor of its own, above the limit.
    signals::LimitUse use;
    for (auto c : {law::TrafficClass::kNormal, law::TrafficClass::kBackground}) {
      use.inflight =
          std::max(use.inflight, static_cast<double>((*snapshot_.inflight)[law::index_of(c)]));
    }
    use.limit = adaptive_limit_;
    return use;
  };
  r.latency = [this] { return latency_.snapshot(); };
  return r;
}

Result<signals::QueueSnapshot> Daemon::accept_queue_snapshot() {
  if (queue_readers_.empty()) {
    for (const auto& iface : interfaces_) {
      auto reader = AcceptQueueReader::open_pinned(pin_dir_for(iface.name));
      if (!reader) return reader.error();
      queue_readers_.push_back(std::move(*reader));
    }
  }
  // Each interface has its own protected ports; a port on several sees
  // the same sockets, so the worst reading of a port stands.
  signals::QueueSnapshot merged;
  for (const auto& reader : queue_readers_) {
    auto snap = reader.read();
    if (!snap) return snap.error();
    for (const auto& [port, q] : *snap) {
      auto& m = merged[port];
      m.depth = std::max(m.depth, q.depth);
      m.max_depth = std::max(m.max_depth, q.max_depth);
      m.waiting = std::max(m.waiting, q.waiting);
      m.oldest_ns = std::max(m.oldest_ns, q.oldest_ns);
    }
  }
  return merged;
}

Status Daemon::build_signals(const config::Config& cfg) {
  auto set = signals::SignalSet::build(cfg.signals, readers());
  if (!set) return set.error();
  signals_.emplace(std::move(*set));
  was_stale_.assign(cfg.signals.size(), false);
  last_error_.assign(cfg.signals.size(), "");
  return {};
}

Daemon::DataplaneSnapshot Daemon::read_dataplane() const {
  ClassCounts inflight{};
  edgeshed_stats stats{};
  DataplaneSnapshot snap;
  for (const auto& iface : interfaces_) {
    if (auto counts = iface.maps.read_inflight_classes(); !counts) {
      snap.inflight = make_error(iface.name + ": " + counts.error().message);
    } else if (snap.inflight) {
      for (size_t c = 0; c < inflight.size(); ++c) inflight[c] += (*counts)[c];
    }
    auto s = iface.maps.read_stats();
    if (!s) {
      snap.stats = make_error(iface.name + ": " + s.error().message);
      continue;
    }
    snap.per_interface.emplace_back(iface.name, *s);
    if (snap.stats) {
      for (int c = 0; c < EDGESHED_NUM_CLASSES; ++c)
        for (int i = 0; i < EDGESHED_NUM_COUNTERS; ++i) stats.cls[c][i] += s->cls[c][i];
      for (int i = 0; i < EDGESHED_NUM_GLOBAL_COUNTERS; ++i) stats.global[i] += s->global[i];
    }
  }
  if (snap.inflight) snap.inflight = inflight;
  if (snap.stats) snap.stats = stats;
  return snap;
}

// Logged on change only, so a broken source costs one line, not ten a second.
void Daemon::log_signal_changes() {
  const auto& states = signals_->states();
  for (size_t i = 0; i < states.size(); ++i) {
    const auto& s = states[i];
    if (s.last_error != last_error_[i]) {
      if (s.last_error.empty()) {
        spdlog::info("signal {} recovered", s.config.name);
      } else {
        spdlog::warn("signal {}: {}", s.config.name, s.last_error);
      }
      last_error_[i] = s.last_error;
    }
    if (s.stale != was_stale_[i] && s.has_sample) {
      if (s.stale) {
        spdlog::warn(
            "signal {} is stale: no sample for over {} ms; ignored for escalation", s.config.name,
            std::chrono::duration_cast<std::chrono::milliseconds>(s.config.stale_after).count());
      }
      was_stale_[i] = s.stale;
    }
  }
}

void Daemon::tick() {
  const auto now = clock_.now();
  if (auto expired = runtime_.expire(std::chrono::system_clock::now()); !expired.empty()) {
    for (const auto& e : expired) spdlog::info("operator: {}", e);
    save_runtime_changes();
    apply_runtime_changes();
  }
  snapshot_ = read_dataplane();
  {
    std::vector<Result<std::vector<signals::PortLatency>>> reads;
    reads.reserve(interfaces_.size());
    for (const auto& iface : interfaces_) reads.push_back(iface.maps.read_latency());
    latency_.update(now, reads);
  }
  law::TickInputs in;
  in.signals = signals_->sample(now);
  log_signal_changes();
  if (!config_.latency_signal.empty()) {
    for (const auto& r : in.signals) {
      if (r.name == config_.latency_signal && !r.stale) in.latency_seconds = r.value;
    }
  } else if (auto input = latency_.limit_input()) {
    // The kernel's response time, when no signal was named for the limit.
    in.latency_seconds = input->p90_s;
    in.completions = input->last_tick_count;
  } else if (latency_.snapshot()) {
    in.completions = 0;  // read, and nothing completed in the window
  }

  if (const auto& counts = snapshot_.inflight; counts) {
    for (size_t c = 0; c < law::kNumClasses; ++c)
      in.inflight[c] = static_cast<uint32_t>((*counts)[c]);
  } else {
    errors_.error("inflight", counts.error().message, now);
  }
  if (const auto& stats = snapshot_.stats; stats) {
    for (size_t c = 0; c < law::kNumClasses; ++c) {
      in.sheds[c] = class_sheds(stats->cls[c]) - class_sheds(last_stats_.cls[c]);
    }
    last_stats_ = *stats;
  } else {
    errors_.error("stats", stats.error().message, now);
  }

  law::Decision d = law_->tick(in);
  adaptive_limit_ = d.adaptive_limit;
  if (d.level_changed) {
    ++level_changes_;
    auto held = std::chrono::duration_cast<std::chrono::milliseconds>(now - level_since_);
    level_since_ = now;
    spdlog::info("level {} -> {} after {} ms: pressure {:.2f}, driven by {}; signals: {}",
                 law::to_string(d.previous_level), law::to_string(d.level), held.count(),
                 d.pressure, join(d.drivers), describe(in.signals));
  }

  if (now - salt_rotated_ >= config_.dataplane.salt_rotation) {
    salt_ = fresh_salt();
    salt_rotated_ = now;
  }
  const auto set = to_policy_set(d, ++generation_);
  const uint32_t mode = static_cast<uint32_t>(d.mode);
  for (auto& iface : interfaces_) {
    if (mode != mode_written_) {
      auto cfg = iface.maps.read_config();
      if (cfg) {
        cfg->mode = mode;
        if (auto s = iface.maps.write_config(*cfg); !s) {
          errors_.error(iface.name + "/mode", iface.name + ": " + s.error().message, now);
        }
      }
    }
    if (auto s = iface.maps.publish(set, static_cast<uint64_t>(now.count()), salt_); !s) {
      errors_.error(iface.name + "/publish", iface.name + ": " + s.error().message, now);
    }
  }
  std::vector<std::string> names;
  for (const auto& iface : interfaces_) names.push_back(iface.name);
  const auto latency = latency_.snapshot();
  auto state = make_state(
      {d, signals_->states(), now, level_since_, names, config_path_, config_.daemon.tick,
       latency ? &*latency : nullptr, runtime_.describe(std::chrono::system_clock::now()),
       config_.metrics.enabled ? std::optional<std::string>(config_.metrics.address + ":" +
                                                            std::to_string(config_.metrics.port))
                               : std::nullopt});
  if (auto s = ipc::write_state_file(state, run_path(kStateFileName)); !s) {
    errors_.error("state", s.error().message, now);
  }
  write_level_file(d.level);

  if (mode != mode_written_) {
    if (mode != mode_logged_) spdlog::info("data plane mode {}", law::to_string(d.mode));
    mode_written_ = mode_logged_ = mode;
  }
  tick_seconds_.observe(std::chrono::duration<double>(clock_.now() - now).count());
  publish_metrics(d);
  notifier_.tick(now);
}

// Rewritten on change only: a service may watch it with inotify.
void Daemon::write_level_file(law::Level level) {
  if (level_file_written_ == level) return;
  auto s = write_file_atomically(run_path(kLevelFileName),
                                 std::string(law::to_string(level)) + "\n", 0644);
  if (!s) {
    errors_.error("level", s.error().message, clock_.now());
    return;
  }
  level_file_written_ = level;
  notifier_.status("level " + std::string(law::to_string(level)));
}

void Daemon::publish_metrics(const law::Decision& d) {
  if (!metrics_) return;
  auto m = std::make_shared<MetricsSnapshot>();
  m->level = d.level;
  m->pressure = d.pressure;
  m->level_pinned = d.level_pinned;
  m->mode = d.mode;
  m->fail_open = d.fail_open;
  m->adaptive_limit = d.adaptive_limit;
  m->policies = d.policies;
  if (snapshot_.inflight) {
    for (size_t c = 0; c < law::kNumClasses; ++c) m->inflight[c] = (*snapshot_.inflight)[c];
  }
  const auto now = clock_.now();
  for (const auto& sig : signals_->states()) {
    SignalMetric g;
    g.name = sig.config.name;
    g.kind = std::string(config::to_string(sig.config.kind));
    g.target = sig.config.target;
    g.stale = sig.stale;
    if (sig.has_sample) {
      g.value = sig.last_good.value;
      g.age_seconds = std::chrono::duration<double>(now - sig.last_good.taken).count();
    }
    m->signals.push_back(std::move(g));
  }
  for (const auto& [name, stats] : snapshot_.per_interface) m->interfaces.push_back({name, stats});
  m->level_changes = level_changes_;
  m->reloads_ok = reloads_ok_;
  m->reloads_failed = reloads_failed_;
  m->ticks = tick_seconds_;
  metrics_->publish(std::move(m));
}

void Daemon::reload() {
  notifier_.reloading();
  auto cfg = config::load_config(config_path_);
  if (!cfg) {
    ++reloads_failed_;
    spdlog::error("reload refused, keeping the running config: {}", cfg.error().message);
    notifier_.ready("reload refused");
    return;
  }
  if (cfg->daemon.run_dir != config_.daemon.run_dir ||
      cfg->metrics.enabled != config_.metrics.enabled ||
      cfg->metrics.address != config_.metrics.address || cfg->metrics.port != config_.metrics.port) {
    spdlog::warn("reload: daemon.run_dir and [metrics] changes take effect at the next restart");
    cfg->daemon.run_dir = config_.daemon.run_dir;
    cfg->metrics = config_.metrics;
  }
  bool same_interfaces = cfg->interfaces.size() == config_.interfaces.size();
  for (size_t i = 0; same_interfaces && i < cfg->interfaces.size(); ++i) {
    same_interfaces = cfg->interfaces[i].name == config_.interfaces[i].name &&
                      cfg->interfaces[i].hook == config_.interfaces[i].hook;
  }
  if (!same_interfaces) {
    spdlog::warn("reload: interface changes take effect at the next restart");
    cfg->interfaces = config_.interfaces;
  }
  // Build everything that can fail before changing anything.
  auto new_signals = signals::SignalSet::build(cfg->signals, readers());
  if (!new_signals) {
    ++reloads_failed_;
    spdlog::error("reload refused, keeping the running config: {}", new_signals.error().message);
    notifier_.ready("reload refused");
    return;
  }
  if (auto s = apply_dataplane_settings(runtime_.applied_to(*cfg)); !s) {
    spdlog::error("reload: data plane settings not fully applied: {}", s.error().message);
  }
  signals_.emplace(std::move(*new_signals));
  was_stale_.assign(cfg->signals.size(), false);
  last_error_.assign(cfg->signals.size(), "");
  law_->reconfigure(cfg->law_config());
  spdlog::set_level(spdlog::level::from_str(cfg->daemon.log_level));
  config_ = std::move(*cfg);
  ++reloads_ok_;
  spdlog::info("reloaded {}", config_path_);
  notifier_.ready("reloaded");
}

void Daemon::stop() {
  notifier_.stopping();
  // Status must not show a stopped daemon as running, and a service must not
  // act on the level of a daemon that no longer decides.
  (void)std::remove(run_path(kStateFileName).c_str());  // absent already is as good
  (void)std::remove(run_path(kLevelFileName).c_str());
  if (auto s = forget_start_history(config_.daemon.run_dir); !s) spdlog::warn("{}", s.error().message);
  for (auto& iface : interfaces_) {
    if (config_.daemon.on_exit == config::OnExit::kDetach) {
      if (auto s = detach(iface.name); !s)
        spdlog::error("{}", s.error().message);
      else
        spdlog::info("detached from {}", iface.name);
      continue;
    }
    // Admit everything now rather than after the heartbeat timeout.
    edgeshed_policy_set open{};
    open.generation = ++generation_;
    if (auto s = iface.maps.publish(open, static_cast<uint64_t>(clock_.now().count()), salt_); !s) {
      spdlog::error("{}: {}", iface.name, s.error().message);
    } else {
      spdlog::info("{}: data plane left attached, admitting everything (on_exit = fail_open)",
                   iface.name);
    }
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
  spdlog::info("running: {} interface(s), {} signal(s), tick {} ms", interfaces_.size(),
               config_.signals.size(),
               std::chrono::duration_cast<std::chrono::milliseconds>(config_.daemon.tick).count());
  tick();
  notifier_.ready("running");
  for (;;) {
    pollfd fds[3] = {{timer.get(), POLLIN, 0}, {sigfd.get(), POLLIN, 0}, {control_->fd(), POLLIN, 0}};
    if (poll(fds, 3, -1) < 0) continue;
    if (fds[2].revents & POLLIN) {
      control_->serve_one([this](const nlohmann::json& r) { return handle_control(r); });
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
      tick();
    }
  }
}

}  // namespace edgeshed::daemon
