// run: the daemon.
#include "cli/commands.h"
#include "daemon/daemon.h"

namespace edgeshed {

void add_run_command(CLI::App& app, CliContext& ctx) {
  auto path = std::make_shared<std::string>("/etc/edgeshed/edgeshed.toml");
  auto* cmd = app.add_subcommand("run", "Run the controller daemon");
  cmd->add_option("-c,--config", *path, "Config file (TOML)")->capture_default_str();
  cmd->callback([path, &ctx] {
    ctx.run = [path, &ctx] {
      auto d = daemon::Daemon::start(*path, ctx.run_dir);
      if (!d) return fail(d.error().message);
      return (*d)->run();
    };
  });
}

}  // namespace edgeshed
