// Each subcommand registers itself on the app and runs after parsing.
// Commands return the process exit code: 0 ok, 1 runtime error.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace edgeshed {

using CommandRunner = std::function<int()>;

// Registers the subcommand; the runner is set when it was chosen.
void add_attach_command(CLI::App& app, CommandRunner& run);
void add_detach_command(CLI::App& app, CommandRunner& run);
void add_policy_command(CLI::App& app, CommandRunner& run);
void add_status_command(CLI::App& app, CommandRunner& run);
void add_run_command(CLI::App& app, CommandRunner& run);

// One line on stderr, prefixed with the program name; returns 1.
int fail(const std::string& message);

}  // namespace edgeshed
