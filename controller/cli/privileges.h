// What a command needs of the process that runs it, checked before anything
// else: a non-root operator is told to run as root, not that "no interface
// is attached" (which is what reading the pins without permission looks like).
#pragma once

#include <string>
#include <vector>

#include "common/result.h"

namespace edgeshed {

enum class Privilege {
  kNone,       // completion, help, version
  kDataPlane,  // reads or writes the pinned maps, or talks to the daemon
  kAttach,     // loads and attaches programs (attach, detach, run)
};

// By the subcommand path, e.g. {"port", "add"}.
Privilege privilege_of(const std::vector<std::string>& command);

// The refusal, naming the command, the cause and what to do; nothing when
// this process may run it.
Status check_privilege(Privilege needed, const std::string& command);

}  // namespace edgeshed
