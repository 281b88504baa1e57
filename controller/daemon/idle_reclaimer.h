// The tick's step that reclaims idle keep-alive connections (keepalive =
// "reclaim" or "refuse"): law/idle_reclaim.h says how many and which, the
// data plane lists them and aborts those chosen.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "common/result.h"
#include "daemon/dataplane_access.h"
#include "law/control_law.h"
#include "law/idle_reclaim.h"

namespace edgeshed::daemon {

class IdleReclaimer {
 public:
  IdleReclaimer(DataplaneAccess& dataplane, law::IdleReclaimConfig config);

  // One tick: connections are the class's established connections; an
  // error when listing or reclaiming failed (the next batch is tried on
  // time regardless).
  Status run(const law::Decision& d, const ClassCounts& connections, std::chrono::nanoseconds now);

 private:
  DataplaneAccess& dataplane_;
  law::IdleReclaim reclaim_;
};

}  // namespace edgeshed::daemon
