// The control protocol: what the CLI asks of a running daemon over its
// control socket, and what the daemon answers. One JSON object per message;
// each request names its kind in "op", and only here are those names
// written. A Request that parse_request returns is valid: names, ranges and
// combinations are checked once, at the wire.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include <nlohmann/json_fwd.hpp>

#include "common/ip_prefix.h"
#include "common/result.h"
#include "config/config.h"
#include "ipc/reset_target.h"
#include "law/types.h"

namespace edgeshed::ipc {

// A change lasts for_s seconds (over 0, at most kMaxForSeconds); without it,
// until it is removed.
inline constexpr double kMaxForSeconds = 7 * 24 * 3600.0;  // a week: longer is a config change
// Upper bound of a cap, a rate or a burst.
inline constexpr uint32_t kMaxCount = 1'000'000'000;

// Is the daemon there? Answered with its pid.
struct PingRequest {
  static constexpr const char* kOp = "ping";
  bool operator==(const PingRequest&) const = default;
};

struct ModeRequest {
  static constexpr const char* kOp = "mode";
  law::Mode mode = law::Mode::kEnforce;
  std::optional<double> for_s;
  bool operator==(const ModeRequest&) const = default;
};

struct ActionRequest {
  static constexpr const char* kOp = "action";
  config::Action action = config::Action::kDrop;
  std::optional<double> for_s;
  bool operator==(const ActionRequest&) const = default;
};

// Holds the pressure level.
struct PinRequest {
  static constexpr const char* kOp = "pin";
  law::Level level = law::Level::kNormal;
  std::optional<double> for_s;
  bool operator==(const PinRequest&) const = default;
};

// Fixes one class's policy: at least one of admit fraction, cap or rate; a
// burst only with a rate.
struct OverrideRequest {
  static constexpr const char* kOp = "override";
  law::TrafficClass traffic_class = law::TrafficClass::kNormal;
  std::optional<double> admit_fraction;  // 0.0..1.0
  std::optional<uint32_t> inflight_cap;  // 1..kMaxCount, like the two below
  std::optional<uint32_t> tokens_per_sec;
  std::optional<uint32_t> burst;
  std::optional<double> for_s;
  bool operator==(const OverrideRequest&) const = default;
};

// Protects a port (1..65535) as a class.
struct PortRequest {
  static constexpr const char* kOp = "port";
  uint16_t port = 0;
  law::TrafficClass traffic_class = law::TrafficClass::kNormal;
  bool operator==(const PortRequest&) const = default;
};

struct PortRemoveRequest {
  static constexpr const char* kOp = "port-remove";
  uint16_t port = 0;
  bool operator==(const PortRemoveRequest&) const = default;
};

// Classes connections from a source prefix.
struct PrefixRequest {
  static constexpr const char* kOp = "prefix";
  IpPrefix prefix;
  law::TrafficClass traffic_class = law::TrafficClass::kNormal;
  bool operator==(const PrefixRequest&) const = default;
};

struct PrefixRemoveRequest {
  static constexpr const char* kOp = "prefix-remove";
  IpPrefix prefix;
  bool operator==(const PrefixRemoveRequest&) const = default;
};

// Gives runtime changes back to the config (ipc/reset_target.h). On the
// wire, "what" names the kind and the class, port or prefix has the same
// typed field as in the requests that made it:
//   {"op": "reset", "what": "level"}   {"op": "reset", "what": "port", "port": 8080}
// A reset without "what" resets all.
struct ResetRequest {
  static constexpr const char* kOp = "reset";
  ResetTarget target = ResetGroup::kAll;
  bool operator==(const ResetRequest&) const = default;
};

using Request =
    std::variant<PingRequest, ModeRequest, ActionRequest, PinRequest, OverrideRequest, PortRequest,
                 PortRemoveRequest, PrefixRequest, PrefixRemoveRequest, ResetRequest>;

// The "op" of a request.
const char* op_of(const Request& request);
nlohmann::json to_json(const Request& request);
// Refuses an unknown op, a missing or mistyped field and a value out of
// range, with a message an operator can act on.
Result<Request> parse_request(const nlohmann::json& j);

// The daemon's answer. Ok: message says what changed (empty for a ping,
// which carries the pid); refused: message says why.
struct Reply {
  bool ok = false;
  std::string message;
  std::optional<int> pid;
  // Done, but not all as asked (e.g. raised to the critical floor): the
  // client shows it as a warning.
  std::string warning;

  static Reply success(std::string message, std::string warning = {}) {
    return {true, std::move(message), std::nullopt, std::move(warning)};
  }
  static Reply failure(std::string why) { return {false, std::move(why), std::nullopt, {}}; }
  static Reply pong(int pid) { return {true, {}, pid, {}}; }
  bool operator==(const Reply&) const = default;
};

// {"ok": true, "message": ..., "warning": ...}, {"ok": true, "pid": ...} or
// {"ok": false, "error": ...}; "warning" only when there is one.
nlohmann::json to_json(const Reply& reply);
Result<Reply> parse_reply(const nlohmann::json& j);

}  // namespace edgeshed::ipc
