// What the daemon tells the world after each tick: the state file (for
// `edgeshed status`, see daemon/state_refresh.h), the level file (for the protected service,
// rewritten on change only), the Prometheus metrics and readiness, the HAProxy
// agent's answer, and systemd's status and watchdog.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "common/result.h"
#include "config/config.h"
#include "daemon/agent_server.h"
#include "daemon/log_limiter.h"
#include "daemon/metrics.h"
#include "daemon/metrics_server.h"
#include "daemon/runtime_changes_keeper.h"
#include "daemon/service_namespaces.h"
#include "daemon/service_notify.h"
#include "daemon/state_refresh.h"
#include "daemon/tick.h"
#include "law/clock.h"

namespace edgeshed::daemon {

class Publisher final : public TickPublisher {
 public:
  // config is the daemon's running config, replaced in place by a reload;
  // all references must outlive the publisher.
  Publisher(const config::Config& config, std::string config_path, const law::Clock& steady,
            const RuntimeChangesKeeper& changes, ServiceNotifier& notifier,
            const ServiceNamespaces& namespaces);

  // Binds the metrics listener when the config enables it.
  Status serve_metrics();
  // Binds the HAProxy agent listener when the config enables it.
  Status serve_agent();
  void publish(const TickOutcome& outcome) override;
  void count_reload(bool ok) { ++(ok ? reloads_ok_ : reloads_failed_); }
  // At a clean stop: status must not show a stopped daemon as running, and
  // a service must not act on the level of a daemon that no longer decides.
  void withdraw();

 private:
  void write_level_file(law::Level level, std::chrono::nanoseconds now);
  // The snapshot both listeners serve from, built only when one is open.
  void publish_snapshot(const TickOutcome& outcome);
  std::string run_path(const char* name) const;

  const config::Config& config_;
  std::string config_path_;
  const law::Clock& steady_;
  const RuntimeChangesKeeper& changes_;
  ServiceNotifier& notifier_;
  const ServiceNamespaces& namespaces_;
  std::unique_ptr<MetricsServer> metrics_;
  std::unique_ptr<AgentServer> agent_;
  TickHistogram tick_seconds_;
  uint64_t level_changes_ = 0;
  uint64_t reloads_ok_ = 0;
  uint64_t reloads_failed_ = 0;
  std::optional<law::Level> level_file_written_;
  LogLimiter errors_{std::chrono::seconds(10)};
  StateRefresh state_refresh_;
};

}  // namespace edgeshed::daemon
