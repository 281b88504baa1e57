#include "daemon/reload.h"

namespace edgeshed::daemon {

ReloadPlan plan_reload(config::Config next, const config::Config& running) {
  ReloadPlan plan;
  if (next.daemon.run_dir != running.daemon.run_dir ||
      next.metrics.listen != running.metrics.listen) {
    plan.deferred.emplace_back(
        "daemon.run_dir and [metrics] listen changes take effect at the next restart");
    next.daemon.run_dir = running.daemon.run_dir;
    next.metrics.listen = running.metrics.listen;
  }
  // What the listeners answer (metrics.not_ready_from, agent.weights, ...)
  // changes now; where they listen waits.
  if (next.agent.listen != running.agent.listen) {
    plan.deferred.emplace_back("[agent] listen changes take effect at the next restart");
    next.agent.listen = running.agent.listen;
  }
  bool same_interfaces = next.interfaces.size() == running.interfaces.size();
  for (size_t i = 0; same_interfaces && i < next.interfaces.size(); ++i) {
    same_interfaces = next.interfaces[i].name == running.interfaces[i].name &&
                      next.interfaces[i].hook == running.interfaces[i].hook;
  }
  if (!same_interfaces) {
    plan.deferred.emplace_back("interface changes take effect at the next restart");
    next.interfaces = running.interfaces;
  }
  plan.config = std::move(next);
  return plan;
}

}  // namespace edgeshed::daemon
