// Changes an operator makes to a running daemon with the CLI (mode, action,
// level pin, class overrides, ports, prefixes). They win over the config
// file, survive config reloads and daemon restarts (persisted in the run
// directory, which is a tmpfs: a reboot clears them), and end when removed
// or when their --for duration runs out. Pure logic: requests in, law
// overrides and an edited config out.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "common/result.h"
#include "config/config.h"
#include "daemon/saved_changes.h"
#include "daemon/wall_clock.h"
#include "ipc/requests.h"
#include "ipc/state.h"
#include "law/overrides.h"
#include "law/types.h"

namespace edgeshed::daemon {

template <class T>
struct Timed {
  T value;
  std::optional<WallTime> until;  // empty: until removed
};

struct ClassOverride {
  std::optional<double> admit_fraction;
  std::optional<uint32_t> inflight_cap;
  std::optional<uint32_t> tokens_per_sec;
  std::optional<uint32_t> burst;
  std::optional<WallTime> until;
};

class RuntimeChanges {
 public:
  // Applies one request of the control protocol (ipc/requests.h) and
  // returns what changed, in words for the daemon's log. Nothing changes
  // when the request is refused. A ping changes nothing and is refused.
  Result<std::string> apply(const ipc::Request& request, WallTime now);
  // The same, from the request's JSON, e.g.
  //   {"op": "pin", "level": "high", "for_s": 600}
  Result<std::string> apply(const nlohmann::json& request, WallTime now);

  // Removes what ran out; returns a description of each for the log.
  std::vector<std::string> expire(WallTime now);

  // The pins for the control law, with expiry on the law's clock.
  law::Overrides law_overrides(WallTime now_wall, std::chrono::nanoseconds now_law) const;
  // The config with the runtime action, ports and prefixes applied.
  config::Config applied_to(config::Config cfg) const;

  bool empty() const;
  // Active changes with the seconds left, for status.
  ipc::ActiveChanges describe(WallTime now) const;

  // Each change as the request that makes it again (daemon/saved_changes.h).
  std::vector<SavedChange> saved() const;
  nlohmann::json to_json() const;
  // Replays the saved requests through apply().
  static Result<RuntimeChanges> from_json(const nlohmann::json& j);

 private:
  Result<std::string> reset(const ipc::ResetTarget& target);

  std::optional<Timed<law::Mode>> mode_;
  std::optional<Timed<config::Action>> action_;
  std::optional<Timed<law::Level>> level_;
  std::array<std::optional<ClassOverride>, law::kNumClasses> classes_;
  // nullopt: unprotected at runtime (removed), whatever the config says.
  std::map<uint16_t, std::optional<law::TrafficClass>> ports_;
  // Keyed by canonical CIDR; nullopt: the override is removed.
  std::map<std::string, std::optional<law::TrafficClass>> prefixes_;
};

}  // namespace edgeshed::daemon
