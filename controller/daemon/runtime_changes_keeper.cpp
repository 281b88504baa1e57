#include "daemon/runtime_changes_keeper.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "ipc/run_dir.h"

namespace edgeshed::daemon {

RuntimeChangesKeeper::RuntimeChangesKeeper(std::string path, const WallClock& wall, Apply apply)
    : path_(std::move(path)), wall_(wall), apply_(std::move(apply)) {}

void RuntimeChangesKeeper::load() {
  std::ifstream in(path_);
  if (!in) return;  // none saved
  auto j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  auto changes = j.is_discarded() ? Result<RuntimeChanges>(make_error("not JSON"))
                                  : RuntimeChanges::from_json(j);
  if (!changes) {
    // Kept for the operator to read.
    const std::string kept = path_ + ".invalid";
    if (std::rename(path_.c_str(), kept.c_str()) != 0) {
      spdlog::error("runtime changes in {} ignored ({}); left in place, cannot move to {}: {}",
                    path_, changes.error().message, kept, std::strerror(errno));
    } else {
      spdlog::error("runtime changes in {} ignored ({}); moved to {}", path_,
                    changes.error().message, kept);
    }
    return;
  }
  changes_ = std::move(*changes);
  const WallTime now = wall_.now();
  for (const auto& e : changes_.expire(now))
    spdlog::info("operator: {} while the daemon was down", e);
  if (!changes_.empty()) {
    spdlog::info("operator changes kept from before the restart: {}",
                 ipc::to_json(changes_.describe(now)).dump());
  }
}

void RuntimeChangesKeeper::save() const {
  if (changes_.empty()) {
    if (auto s = ipc::remove_file(path_); !s) {
      spdlog::error("{}: a restart would bring back the cleared changes", s.error().message);
    }
    return;
  }
  if (auto s = ipc::write_file_atomically(path_, changes_.to_json().dump(1) + "\n", 0600); !s) {
    spdlog::error("runtime changes not saved, a restart would lose them: {}", s.error().message);
  }
}

namespace {

// What of a critical override the floor raises, or nothing.
std::string floor_warning(const ipc::OverrideRequest& o, const law::CriticalFloor& floor) {
  if (o.traffic_class != law::TrafficClass::kCritical) return "";
  std::string raised;
  if (o.admit_fraction && *o.admit_fraction < floor.fraction) {
    raised += fmt::format("admit fraction {} is raised to {} (critical.floor_fraction)",
                          *o.admit_fraction, floor.fraction);
  }
  if (o.inflight_cap && *o.inflight_cap < floor.inflight) {
    raised += fmt::format("{}cap {} is raised to {} (critical.floor_inflight)",
                          raised.empty() ? "" : "; ", *o.inflight_cap, floor.inflight);
  }
  return raised.empty() ? "" : "critical keeps its floor: " + raised;
}

// A critical override as the law applies it, raised to the floor: what is
// kept, and shown by status, is what is in force.
ipc::OverrideRequest raised_to_floor(ipc::OverrideRequest o, const law::CriticalFloor& floor) {
  if (o.traffic_class != law::TrafficClass::kCritical) return o;
  if (o.admit_fraction) o.admit_fraction = std::max(*o.admit_fraction, floor.fraction);
  if (o.inflight_cap) o.inflight_cap = std::max(*o.inflight_cap, floor.inflight);
  return o;
}

}  // namespace

Result<std::string> RuntimeChangesKeeper::apply_effective(const ipc::Request& request) {
  const auto* remove = std::get_if<ipc::PortRemoveRequest>(&request);
  if (remove &&
      std::find(config_ports_.begin(), config_ports_.end(), remove->port) == config_ports_.end()) {
    // A port only a runtime change protected: its removal undoes that change.
    auto undone =
        changes_.apply(ipc::Request{ipc::ResetRequest{ipc::ResetPort{remove->port}}}, wall_.now());
    if (!undone) return undone;
    return "port " + std::to_string(remove->port) + " unprotected";
  }
  return changes_.apply(request, wall_.now());
}

nlohmann::json RuntimeChangesKeeper::handle(const nlohmann::json& request) {
  auto parsed = ipc::parse_request(request);
  if (parsed && std::holds_alternative<ipc::PingRequest>(*parsed)) {
    return ipc::to_json(ipc::Reply::pong(getpid()));
  }
  std::string warning;
  if (const auto* o = parsed ? std::get_if<ipc::OverrideRequest>(&*parsed) : nullptr; o && floor_) {
    warning = floor_warning(*o, *floor_);
    *parsed = raised_to_floor(*o, *floor_);
  }
  auto changed = parsed ? apply_effective(*parsed) : Result<std::string>(parsed.error());
  if (!changed) {
    spdlog::warn("operator request refused: {} ({})", changed.error().message, request.dump());
    return ipc::to_json(ipc::Reply::failure(changed.error().message));
  }
  spdlog::info("operator: {}", *changed);
  save();
  apply();
  // In force from the next tick: an extra tick here would count towards the
  // law's dwell times.
  if (!warning.empty()) spdlog::warn("operator: {}", warning);
  return ipc::to_json(ipc::Reply::success(*changed, warning));
}

void RuntimeChangesKeeper::expire(WallTime now) {
  const auto expired = changes_.expire(now);
  if (expired.empty()) return;
  for (const auto& e : expired) spdlog::info("operator: {}", e);
  save();
  apply();
}

}  // namespace edgeshed::daemon
