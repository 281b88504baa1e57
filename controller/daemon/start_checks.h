// What a config must give the daemon before it writes its run directory or
// touches the kernel: an interface that exists here, a port to protect, and
// for a port in another network namespace the capabilities to enter it.
// The parse cannot know the host's interfaces, and a config that protects
// nothing parses; both would start a daemon that looks healthy and does
// nothing.
#pragma once

#include <string>

#include "common/result.h"
#include "config/config.h"

namespace edgeshed::daemon {

// The first problem, naming the file (and line, for an interface) and what
// to add or change; nothing when the daemon can start.
Status check_config_can_start(const config::Config& config, const std::string& config_path);

}  // namespace edgeshed::daemon
