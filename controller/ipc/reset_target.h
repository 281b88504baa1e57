// What `reset` gives back to the config, as a typed value: a whole group
// (all, mode, action, level) or one class override, port or prefix. The CLI
// builds it from the operator's words ("port:8080"), the wire carries it as
// typed fields (ipc/requests.h), and the daemon consumes it as it is.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/ip_prefix.h"
#include "common/result.h"
#include "law/types.h"

namespace edgeshed::ipc {

// The whole-word targets.
enum class ResetGroup { kAll, kMode, kAction, kLevel };

struct ResetClass {
  law::TrafficClass traffic_class = law::TrafficClass::kNormal;
  bool operator==(const ResetClass&) const = default;
};
struct ResetPort {
  uint16_t port = 0;  // 1..65535
  bool operator==(const ResetPort&) const = default;
};
struct ResetPrefix {
  IpPrefix prefix;
  bool operator==(const ResetPrefix&) const = default;
};

using ResetTarget = std::variant<ResetGroup, ResetClass, ResetPort, ResetPrefix>;

// The word of a group, and of each target's kind on the wire ("what").
std::string_view to_string(ResetGroup group);
std::string_view reset_kind(const ResetTarget& target);

// The operator's syntax: all, mode, action, level, class:CLASS,
// port:1..65535 or prefix:CIDR; refused with the reason otherwise.
Result<ResetTarget> parse_reset_target(std::string_view what);
// The same words back ("port:8080"; a prefix in canonical form).
std::string to_string(const ResetTarget& target);

// The targets as typed, for completion: whole words and "port:", "prefix:".
std::vector<std::string> reset_target_words();

}  // namespace edgeshed::ipc
