// A setting written without a daemon into a data plane that fails open
// (heartbeat timeout set, no controller publishing) changes nothing until a
// controller ticks: the operator is told so, and the two ways to make it act.
#pragma once

#include <optional>
#include <string>

#include "dataplane/maps.h"

namespace edgeshed {

// "policy of normal on eth0 has no effect ..."; nothing while the data plane
// decides (fail-static, or a controller's heartbeat is fresh).
std::optional<std::string> fail_open_warning(const Maps& maps, const std::string& iface,
                                             const std::string& what);

// The same for each interface `only` names (all attached, when empty), on
// stderr.
void warn_if_failing_open(const std::string& only, const std::string& what);

}  // namespace edgeshed
