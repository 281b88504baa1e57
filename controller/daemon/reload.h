// Config diffing for a reload (SIGHUP): what a reload may change at once,
// and what must wait for a restart because the daemon holds it open (the
// run directory, the metrics and agent listeners, the attached interfaces).
#pragma once

#include <string>
#include <vector>

#include "config/config.h"

namespace edgeshed::daemon {

struct ReloadPlan {
  config::Config config;  // the new config, with restart-only fields kept as running
  // For the log, e.g. "interface changes take effect at the next restart".
  std::vector<std::string> deferred;
};

ReloadPlan plan_reload(config::Config next, const config::Config& running);

}  // namespace edgeshed::daemon
