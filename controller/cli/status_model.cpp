#include "cli/status_model.h"

namespace edgeshed {

using Json = nlohmann::ordered_json;

Json status_json(const Json& daemon, const Json& health,
                 const std::vector<InterfaceReading>& interfaces) {
  const bool deciding = health.value("state", "running") == "running";
  const std::string why = health.value("why", "");
  Json all = Json::array();
  for (const auto& reading : interfaces) {
    InterfaceStatus s = reading.status;
    if (!s.error && !deciding) {
      if (s.fail_open) {
        s.fail_open_reason = s.fail_open_reason.value_or("") + ": " + why;
      } else if (s.heartbeat_timeout_ms == 0) {
        s.fail_static_note =
            "heartbeat timeout 0 (fail-static): the last policy published stays in force: " + why;
      }
    }
    all.push_back(to_json(s));
  }
  return {{"daemon", daemon}, {"daemon_health", health}, {"interfaces", all}};
}

}  // namespace edgeshed
