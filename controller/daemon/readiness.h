// GET /ready on the metrics listener: whether an orchestrator or a load
// balancer should send this host new work. Ready below the configured level
// ([metrics] not_ready_from, critical by default); not ready from it, and
// before the first tick, when nothing has been decided yet.
#pragma once

#include <string>

#include "daemon/metrics.h"
#include "law/types.h"

namespace edgeshed::daemon {

struct ReadyAnswer {
  int status = 503;  // HTTP status: 200 or 503
  std::string body;  // "ready\n", "not ready: high\n", "not ready: no tick yet\n"
};

// snapshot: the last one published, null before the first tick.
ReadyAnswer ready_answer(const MetricsSnapshot* snapshot, law::Level not_ready_from);

}  // namespace edgeshed::daemon
