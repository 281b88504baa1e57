// Which interfaces a command acts on: the one its --iface names, which must
// have a data plane attached, or every attached one. A name that matches
// nothing is an error, never "all of them".
#pragma once

#include <string>
#include <vector>

#include "common/result.h"

namespace edgeshed {

// only empty: every attached interface (an error when there is none).
Result<std::vector<std::string>> target_interfaces(const std::string& only);

// With a daemon running, whose runtime changes apply to every interface it
// manages: --iface may only name the one interface it manages (the change
// then goes through the daemon); otherwise the refusal says why.
Status check_daemon_iface(const std::string& only, const std::vector<std::string>& managed,
                          const std::string& what);

}  // namespace edgeshed
