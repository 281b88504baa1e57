#include "daemon/publisher.h"

#include <algorithm>
#include <cstdio>

#include "daemon/state_file.h"
#include "ipc/run_dir.h"

namespace edgeshed::daemon {

Publisher::Publisher(const config::Config& config, std::string config_path,
                     const law::Clock& steady, const RuntimeChangesKeeper& changes,
                     ServiceNotifier& notifier, const ServiceNamespaces& namespaces)
    : config_(config),
      config_path_(std::move(config_path)),
      steady_(steady),
      changes_(changes),
      notifier_(notifier),
      namespaces_(namespaces) {}

std::string Publisher::run_path(const char* name) const {
  return config_.daemon.run_dir + "/" + name;
}

Status Publisher::serve_metrics() {
  if (!config_.metrics.listen.enabled) return {};
  auto m = MetricsServer::start(config_.metrics.listen.address, config_.metrics.listen.port);
  if (!m) return m.error();
  metrics_ = std::move(*m);
  return {};
}

Status Publisher::serve_agent() {
  if (!config_.agent.listen.enabled) return {};
  auto a = AgentServer::start(config_.agent.listen.address, config_.agent.listen.port);
  if (!a) return a.error();
  agent_ = std::move(*a);
  return {};
}

void Publisher::publish(const TickOutcome& o) {
  if (o.decision.level_changed) ++level_changes_;
  const config::ListenConfig& metrics = config_.metrics.listen;
  auto state = make_state(
      {o.decision, o.signals, o.now, o.level_since, o.interfaces, config_path_, config_.daemon.tick,
       o.latency, changes_.changes().describe(o.wall_now),
       metrics.enabled
           ? std::optional<std::string>(metrics.address + ":" + std::to_string(metrics.port))
           : std::nullopt});
  if (state_refresh_.due(state, o.now, config_.daemon.tick)) {
    if (auto s = ipc::write_state_file(state, run_path(ipc::kStateFileName)); !s) {
      errors_.error("state", s.error().message, o.now);
    } else {
      state_refresh_.written(state, o.now);
    }
  }
  write_level_file(o.decision.level, o.now);
  tick_seconds_.observe(std::chrono::duration<double>(steady_.now() - o.now).count());
  publish_snapshot(o);
  notifier_.tick(o.now);
}

// Rewritten on change only: a service may watch it with inotify.
void Publisher::write_level_file(law::Level level, std::chrono::nanoseconds now) {
  if (level_file_written_ == level) return;
  auto s = ipc::write_file_atomically(run_path(ipc::kLevelFileName),
                                      std::string(names::name_of(level)) + "\n", 0644);
  if (!s) {
    errors_.error("level", s.error().message, now);
    return;
  }
  level_file_written_ = level;
  notifier_.status("level " + std::string(names::name_of(level)));
}

void Publisher::publish_snapshot(const TickOutcome& o) {
  if (!metrics_ && !agent_) return;
  const law::Decision& d = o.decision;
  auto m = std::make_shared<MetricsSnapshot>();
  m->level = d.level;
  m->pressure = d.pressure;
  m->level_pinned = d.level_pinned;
  m->mode = d.mode;
  m->fail_open = d.fail_open;
  m->adaptive_limit = d.adaptive_limit;
  m->adaptive_limit_open = d.adaptive_limit_open;
  m->policies = d.policies;
  if (o.dataplane.inflight) {
    for (size_t c = 0; c < law::kNumClasses; ++c) {
      m->inflight[c] = (*o.dataplane.inflight)[c];
      m->connections[c] = o.dataplane.connections[c];
      m->inflight_age_ns[c] = o.dataplane.inflight_age_ns[c];
    }
  }
  const auto now = steady_.now();
  for (const auto& sig : o.signals) {
    SignalMetric g;
    g.name = sig.config.name;
    g.kind = sig.config.kind;
    g.target = sig.config.target;
    g.stale = sig.stale;
    if (sig.has_sample) {
      g.value = sig.last_good.value;
      g.age_seconds = std::chrono::duration<double>(now - sig.last_good.taken).count();
    }
    m->signals.push_back(std::move(g));
  }
  for (const auto& [name, stats] : o.dataplane.per_interface)
    m->interfaces.push_back({name, stats});
  for (const auto& p : config_.ports) {
    const bool listed = std::any_of(m->port_namespaces.begin(), m->port_namespaces.end(),
                                    [&p](const auto& q) { return q.port == p.port; });
    if (!p.netns || listed) continue;  // a port's protocols share their namespace
    // A port an operator's change took away is not followed.
    const auto found = namespaces_.found(*p.netns);
    if (found) m->port_namespaces.push_back({p.port, p.netns->describe(), *found});
  }
  m->level_changes = level_changes_;
  m->reloads_ok = reloads_ok_;
  m->reloads_failed = reloads_failed_;
  m->ticks = tick_seconds_;
  m->not_ready_from = config_.metrics.not_ready_from;
  m->agent_reply = config_.agent.reply;
  if (agent_) agent_->publish(m);
  if (metrics_) metrics_->publish(std::move(m));
}

void Publisher::withdraw() {
  (void)std::remove(run_path(ipc::kStateFileName).c_str());  // absent already is as good
  (void)std::remove(run_path(ipc::kLevelFileName).c_str());
}

}  // namespace edgeshed::daemon
