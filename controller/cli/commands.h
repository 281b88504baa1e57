// Each subcommand registers itself on the app and runs after parsing.
// Commands return the process exit code: 0 ok, 1 runtime error (usage
// errors, exit 2, are CLI11's and never reach a command).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace edgeshed {

using CommandRunner = std::function<int()>;
// Starts the daemon with a config file and runs it until it stops; returns
// the exit code. Given by the binary's entry: the CLI does not link the
// daemon.
// run_dir_given: named by --run-dir or EDGESHED_RUN_DIR, so it wins over
// the config's daemon.run_dir.
using DaemonRunner = std::function<int(const std::string& config_path, const std::string& run_dir,
                                       bool run_dir_given)>;

// Checks a config as `run` would, touching nothing, and prints what the
// daemon would do; returns the exit code. run_dir: the --run-dir given, or
// empty. Given by the binary's entry, as DaemonRunner is.
using ConfigChecker =
    std::function<int(const std::string& config_path, const std::string& run_dir)>;

// Options of the whole program, and what shell completion needs to know.
struct CliContext {
  CommandRunner run;
  // What `run` runs; empty in a CLI without the daemon (unit tests).
  DaemonRunner run_daemon;
  // What `check` runs; empty in a CLI without the daemon.
  ConfigChecker check_config;
  // Where the daemon keeps its state file and control socket.
  std::string run_dir = "/run/edgeshed";
  bool run_dir_given = false;
  bool verbose = false;
  // Tuning without a daemon writes to this interface's maps (empty: all).
  std::string direct_iface;
  // Values an option or positional takes, for completion.
  std::map<const CLI::Option*, std::vector<std::string>> choices;

  // Restricts opt to choices and records them for completion.
  CLI::Option* choose(CLI::Option* opt, std::vector<std::string> values);
  // Records values completion offers for opt, which its own check judges
  // (e.g. reset's class:CLASS and port:PORT).
  CLI::Option* suggest(CLI::Option* opt, std::vector<std::string> values);
};

// Registers the subcommand; ctx.run is set when it was chosen.
void add_attach_command(CLI::App& app, CliContext& ctx);
void add_detach_command(CLI::App& app, CliContext& ctx);
void add_policy_command(CLI::App& app, CliContext& ctx);
void add_status_command(CLI::App& app, CliContext& ctx);
void add_top_command(CLI::App& app, CliContext& ctx);
void add_events_command(CLI::App& app, CliContext& ctx);
void add_tuning_commands(CLI::App& app, CliContext& ctx);
void add_run_command(CLI::App& app, CliContext& ctx);
void add_check_command(CLI::App& app, CliContext& ctx);
void add_completion_command(CLI::App& app, CliContext& ctx);

// One line on stderr, prefixed with the program name; returns 1.
int fail(const std::string& message);

}  // namespace edgeshed
