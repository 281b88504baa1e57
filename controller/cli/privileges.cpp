#include "cli/privileges.h"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "dataplane/capabilities.h"
#include "edgeshed/abi.h"

namespace edgeshed {
namespace {

// The pins are the daemon's (0700): root, or the user the unit runs it as.
std::string pins_owner_hint() {
  struct stat st {};
  if (stat(EDGESHED_PIN_ROOT, &st) != 0 || st.st_uid == 0) return "";
  const passwd* pw = getpwuid(st.st_uid);
  const std::string name = pw != nullptr ? pw->pw_name : "uid " + std::to_string(st.st_uid);
  return ", or as " + name + " (the owner of " EDGESHED_PIN_ROOT ") with CAP_BPF";
}

}  // namespace

Privilege privilege_of(const std::vector<std::string>& command) {
  // check reports missing privileges among its findings.
  if (command.empty() || command[0] == "completion" || command[0] == "check") {
    return Privilege::kNone;
  }
  if (command[0] == "attach" || command[0] == "detach" || command[0] == "run") {
    return Privilege::kAttach;
  }
  return Privilege::kDataPlane;
}

Status check_privilege(Privilege needed, const std::string& command) {
  if (needed == Privilege::kNone) return {};
  if (needed == Privilege::kAttach) {
    if (auto s = require_capabilities(); !s) {
      return make_error("`" + command +
                        "` needs privileges it does not have: " + s.error().message);
    }
    return {};
  }
  // bpf(2) on a pin needs CAP_BPF, and the pins and the daemon's control
  // socket are private to their owner.
  const bool pins_closed = access(EDGESHED_PIN_ROOT, R_OK | X_OK) != 0 && errno == EACCES;
  if (may_use_bpf() && !pins_closed) return {};
  return make_error("`" + command +
                    "` needs root: the data plane's pins (" EDGESHED_PIN_ROOT
                    ") and the daemon's control socket are root's, and reading a pin needs "
                    "CAP_BPF; run it as root (sudo " +
                    command + ")" + pins_owner_hint());
}

}  // namespace edgeshed
