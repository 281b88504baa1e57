#include "daemon/agent_reply.h"

#include <algorithm>

namespace edgeshed::daemon {

uint32_t agent_maxconn(const MetricsSnapshot& snapshot) {
  if (snapshot.mode != law::Mode::kEnforce || snapshot.fail_open) return 0;
  const uint32_t cap = snapshot.policies[law::index_of(law::TrafficClass::kNormal)].inflight_cap;
  if (cap == law::kUnlimited) return 0;
  // A cap of 0 admits nothing, but HAProxy reads maxconn:0 as no limit.
  return std::max<uint32_t>(cap, 1);
}

std::string agent_reply(const MetricsSnapshot& snapshot, const config::AgentReplyConfig& config) {
  const law::Level level = snapshot.level;
  std::string line = std::to_string(config.weight_percent[law::index_of(level)]) + "%";
  line += level == law::Level::kCritical ? " drain" : " ready";
  if (config.send_maxconn) line += " maxconn:" + std::to_string(agent_maxconn(snapshot));
  return line + "\n";
}

}  // namespace edgeshed::daemon
