// The edgeshed command line: every subcommand on one CLI11 app.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>

#include "cli/commands.h"

namespace edgeshed {

std::unique_ptr<CLI::App> make_app(CliContext& ctx);

// Parses and runs; returns the exit code (2 for usage errors). `run` runs
// run_daemon, `check` check_config.
int run_cli(int argc, const char* const* argv, DaemonRunner run_daemon = {},
            ConfigChecker check_config = {});

}  // namespace edgeshed
