// run and check: the daemon, and its checks of a config, as the binary's
// entry provides them.
#include "cli/commands.h"

namespace edgeshed {

void add_run_command(CLI::App& app, CliContext& ctx) {
  auto path = std::make_shared<std::string>("/etc/edgeshed/edgeshed.toml");
  auto* cmd = app.add_subcommand("run", "Run the controller daemon");
  cmd->add_option("-c,--config", *path,
                  "Config file (TOML); it must name an [[interface]] and a [[port]]")
      ->capture_default_str();
  cmd->callback([path, &ctx] {
    ctx.run = [path, &ctx] {
      if (!ctx.run_daemon) return fail("this build of edgeshed has no daemon");
      return ctx.run_daemon(*path, ctx.run_dir, ctx.run_dir_given);
    };
  });
}

void add_check_command(CLI::App& app, CliContext& ctx) {
  auto path = std::make_shared<std::string>("/etc/edgeshed/edgeshed.toml");
  auto* cmd = app.add_subcommand(
      "check",
      "Check a config as `run` would (interfaces, ports, signals, privileges) and print what the "
      "daemon would do; starts nothing, records no start, takes no lock");
  cmd->add_option("-c,--config", *path, "Config file (TOML)")->capture_default_str();
  cmd->callback([path, &ctx] {
    ctx.run = [path, &ctx] {
      if (!ctx.check_config) return fail("this build of edgeshed has no daemon to check for");
      return ctx.check_config(*path, ctx.run_dir_given ? ctx.run_dir : std::string());
    };
  });
}

}  // namespace edgeshed
