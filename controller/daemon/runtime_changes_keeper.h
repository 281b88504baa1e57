// The operator's runtime changes as the daemon keeps them: loaded from and
// saved to the run directory, changed by control requests, expired by the
// tick (at the wall time the tick read). The changes themselves, pure logic
// without I/O, are RuntimeChanges (runtime_changes.h): as LearntState and
// LearntKeeper. Where they take effect (the law's pins, the data plane's
// settings) is the apply callback's business, wired by the daemon.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "config/config.h"
#include "daemon/runtime_changes.h"
#include "daemon/wall_clock.h"
#include "law/policy.h"

namespace edgeshed::daemon {

class RuntimeChangesKeeper {
 public:
  using Apply = std::function<void(const RuntimeChanges&)>;

  // path: the runtime file (kRuntimeFileName in the run directory).
  RuntimeChangesKeeper(std::string path, const WallClock& wall, Apply apply);

  // Reads the changes saved before a restart. An unreadable file is moved
  // aside: starting without them is safer than not starting at all.
  void load();
  // One control request; the reply for the client.
  nlohmann::json handle(const nlohmann::json& request);
  // Drops what ran out; saves and applies the rest if anything did.
  void expire(WallTime now);
  // Hands the current changes to the apply callback.
  void apply() const { apply_(changes_); }

  // The config's critical floor, which the law raises critical's overrides
  // to: a reply says so instead of leaving the operator to find out.
  void set_critical_floor(const law::CriticalFloor& floor) { floor_ = floor; }
  // The ports the config protects: removing one it does not is undoing an
  // add, not a change to keep (status would list "port N removed").
  void set_config_ports(std::vector<uint16_t> ports) { config_ports_ = std::move(ports); }

  const RuntimeChanges& changes() const { return changes_; }
  config::Config applied_to(config::Config cfg) const {
    return changes_.applied_to(std::move(cfg));
  }

 private:
  void save() const;
  // The request as it takes effect: a port the config does not protect,
  // removed, is the add undone.
  Result<std::string> apply_effective(const ipc::Request& request);

  std::string path_;
  const WallClock& wall_;
  Apply apply_;
  RuntimeChanges changes_;
  std::optional<law::CriticalFloor> floor_;
  std::vector<uint16_t> config_ports_;
};

}  // namespace edgeshed::daemon
