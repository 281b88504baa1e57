// The line the HAProxy agent-check responder (daemon/agent_server.h) sends,
// from the snapshot the tick thread last published. HAProxy 2.6 reads one
// line of words (configuration.txt, "agent-check"):
//   "<n>%"          the server's weight, n% of the one it was configured with;
//   "ready"/"drain" its administrative state. Only the agent can undo a drain
//                   of its own, so every level below critical says "ready";
//   "maxconn:<n>"   its maxconn; 0 is HAProxy's "no limit", which lifts a cap
//                   sent earlier (HAProxy keeps the last value it was given).
#pragma once

#include <cstdint>
#include <string>

#include "config/config.h"
#include "daemon/metrics.h"

namespace edgeshed::daemon {

// The maxconn HAProxy is told: the normal class's in-flight cap while the
// data plane enforces it (mode enforce, not failing open), else 0 (none).
uint32_t agent_maxconn(const MetricsSnapshot& snapshot);

// "<weight>% <ready|drain>[ maxconn:<n>]\n": "100% ready maxconn:0\n" at
// normal without a cap, "25% ready maxconn:12\n" at high under a cap of 12,
// "0% drain maxconn:0\n" at critical (with the default weights).
std::string agent_reply(const MetricsSnapshot& snapshot, const config::AgentReplyConfig& config);

}  // namespace edgeshed::daemon
