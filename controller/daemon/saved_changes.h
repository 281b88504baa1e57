// The runtime changes file (ipc::kRuntimeFileName) as typed requests: each
// saved change is the control request that makes it again, with when it
// ends. Written with the protocol's serialiser and read back with its parser
// (ipc/requests.h), so a replayed change is checked like a live one.
//
// The layout is the one earlier releases wrote (a daemon restarted after an
// upgrade keeps its operator's changes):
//   {"mode":   {"mode": "observe", "until_ms": 1700000000000},
//    "level":  {"level": "high", "until_ms": null},
//    "classes": {"normal": {"inflight_cap": 5, "until_ms": null}},
//    "ports":  {"8080": "critical", "9090": null},
//    "prefixes": {"192.0.2.0/24": "background"}}
// A null class is the removal request (port-remove, prefix-remove).
#pragma once

#include <optional>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "common/result.h"
#include "daemon/wall_clock.h"
#include "ipc/requests.h"

namespace edgeshed::daemon {

struct SavedChange {
  ipc::Request request;  // without for_s: until says when it ends
  std::optional<WallTime> until;
  bool operator==(const SavedChange&) const = default;
};

nlohmann::json saved_changes_json(const std::vector<SavedChange>& changes);
// Refuses what the protocol would refuse, naming the entry.
Result<std::vector<SavedChange>> parse_saved_changes(const nlohmann::json& j);

}  // namespace edgeshed::daemon
