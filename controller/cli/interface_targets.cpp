#include "cli/interface_targets.h"

#include <algorithm>
#include <filesystem>

#include "cli/status_model.h"
#include "common/join.h"
#include "dataplane/attach.h"

namespace edgeshed {
Result<std::vector<std::string>> target_interfaces(const std::string& only) {
  const auto attached = attached_interfaces();
  if (only.empty()) {
    if (attached.empty()) {
      return make_error("no interface is attached (nothing in " EDGESHED_PIN_ROOT
                        "); start `edgeshed run --config FILE` or `edgeshed attach`");
    }
    return attached;
  }
  if (std::find(attached.begin(), attached.end(), only) == attached.end()) {
    return make_error("nothing is attached on " + only + " (no " + pin_dir_for(only) + "); " +
                      (attached.empty() ? std::string("no interface is attached")
                                        : "attached: " + join(attached, ", ")));
  }
  return std::vector<std::string>{only};
}

Status check_daemon_iface(const std::string& only, const std::vector<std::string>& managed,
                          const std::string& what) {
  if (only.empty() || managed == std::vector<std::string>{only}) return {};
  if (std::find(managed.begin(), managed.end(), only) == managed.end()) {
    return make_error("--iface " + only + ": the running daemon does not manage " + only +
                      " (it manages " + (managed.empty() ? "none" : join(managed, ", ")) +
                      "); nothing changed");
  }
  return make_error("--iface " + only + ": the running daemon applies " + what +
                    " to every interface it manages (" + join(managed, ", ") +
                    "), not to one; drop --iface to change them all; nothing changed");
}

}  // namespace edgeshed
