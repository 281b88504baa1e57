// What `edgeshed reset` may name: checked by the CLI before it talks to the
// daemon, and by the daemon for any other client, with the same words.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace edgeshed::ipc {

// all, mode, action, level, class:CLASS, port:1..65535 or prefix:CIDR.
Status check_reset_target(std::string_view what);

// The targets as typed, for completion: whole words and "port:", "prefix:".
std::vector<std::string> reset_target_words();

}  // namespace edgeshed::ipc
