#include "daemon/daemon.h"

#include <poll.h>
#include <pthread.h>
#include <spdlog/spdlog.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>

#include <algorithm>
#include <csignal>
#include <random>
#include <sstream>

#include "daemon/policy_writer.h"
#include "daemon/state_file.h"
#include "dataplane/attach.h"
#include "dataplane/fd.h"

namespace edgeshed::daemon {
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

uint64_t real_sheds(const edgeshed_stats& s, size_t cls) {
  return s.cls[cls][EDGESHED_CTR_SHED_CAP] + s.cls[cls][EDGESHED_CTR_SHED_FRAC] +
         s.cls[cls][EDGESHED_CTR_SHED_RATE];
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

Result<std::unique_ptr<Daemon>> Daemon::start(const std::string& config_path) {
  const sigset_t mask = control_signals();
  pthread_sigmask(SIG_BLOCK, &mask, nullptr);
  auto cfg = config::load_config(config_path);
  if (!cfg) return cfg.error();
  if (cfg->interfaces.empty()) return make_error(config_path + ": no [[interface]] configured");
  spdlog::set_level(spdlog::level::from_str(cfg->daemon.log_level));
  std::unique_ptr<Daemon> d(new Daemon(config_path, std::move(*cfg)));  // private ctor
  // Everything that can be refused is checked before the kernel is touched.
  if (auto s = d->build_signals(d->config_); !s) return s.error();
  if (auto s = d->attach_all(); !s) return s.error();
  d->law_ = std::make_unique<law::LevelControlLaw>(d->config_.law_config(), d->clock_);
  d->salt_ = fresh_salt();
  d->salt_rotated_ = d->clock_.now();
  d->level_since_ = d->clock_.now();
  return d;
}

Status Daemon::attach_all() {
  for (const auto& iface : config_.interfaces) {
    AttachOptions opts;
    opts.iface = iface.name;
    opts.hook = static_cast<uint32_t>(iface.hook);
    opts.mode = static_cast<uint32_t>(config_.dataplane.mode);
    opts.action = static_cast<uint32_t>(config_.dataplane.action);
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
  return apply_dataplane_settings(config_);
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
    if (auto s = iface.maps.read_stats(); !s) {
      snap.stats = make_error(iface.name + ": " + s.error().message);
    } else if (snap.stats) {
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
  snapshot_ = read_dataplane();
  law::TickInputs in;
  in.signals = signals_->sample(now);
  log_signal_changes();
  for (const auto& r : in.signals) {
    if (r.name == config_.latency_signal && !r.stale) in.latency_seconds = r.value;
  }

  if (const auto& counts = snapshot_.inflight; counts) {
    for (size_t c = 0; c < law::kNumClasses; ++c)
      in.inflight[c] = static_cast<uint32_t>((*counts)[c]);
  } else {
    errors_.error("inflight", counts.error().message, now);
  }
  if (const auto& stats = snapshot_.stats; stats) {
    for (size_t c = 0; c < law::kNumClasses; ++c) {
      in.sheds[c] = real_sheds(*stats, c) - real_sheds(last_stats_, c);
    }
    last_stats_ = *stats;
  } else {
    errors_.error("stats", stats.error().message, now);
  }

  law::Decision d = law_->tick(in);
  if (d.level_changed) {
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
  auto state = to_json({d, signals_->states(), now, level_since_, names, config_path_});
  if (auto s = write_state(state); !s) errors_.error("state", s.error().message, now);

  if (mode != mode_written_) {
    if (mode != mode_logged_) spdlog::info("data plane mode {}", law::to_string(d.mode));
    mode_written_ = mode_logged_ = mode;
  }
}

void Daemon::reload() {
  auto cfg = config::load_config(config_path_);
  if (!cfg) {
    spdlog::error("reload refused, keeping the running config: {}", cfg.error().message);
    return;
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
    spdlog::error("reload refused, keeping the running config: {}", new_signals.error().message);
    return;
  }
  if (auto s = apply_dataplane_settings(*cfg); !s) {
    spdlog::error("reload: data plane settings not fully applied: {}", s.error().message);
  }
  signals_.emplace(std::move(*new_signals));
  was_stale_.assign(cfg->signals.size(), false);
  last_error_.assign(cfg->signals.size(), "");
  law_->reconfigure(cfg->law_config());
  spdlog::set_level(spdlog::level::from_str(cfg->daemon.log_level));
  config_ = std::move(*cfg);
  spdlog::info("reloaded {}", config_path_);
}

void Daemon::stop() {
  std::remove(kStateFile);  // status must not show a stopped daemon as running
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
  for (;;) {
    pollfd fds[2] = {{timer.get(), POLLIN, 0}, {sigfd.get(), POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) continue;
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
