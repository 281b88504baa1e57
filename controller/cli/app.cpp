#include "cli/app.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <string_view>
#include <utility>

namespace edgeshed {

constexpr int kUsageError = 2;

namespace {

// Errors quote the arguments they refuse: control characters in them are
// escaped, so that the message stays one line and cannot drive the terminal.
std::string printable(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace

CLI::Option* CliContext::choose(CLI::Option* opt, std::vector<std::string> values) {
  opt->check(CLI::IsMember(values));
  choices[opt] = std::move(values);
  return opt;
}

std::unique_ptr<CLI::App> make_app(CliContext& ctx) {
  auto app = std::make_unique<CLI::App>(
      "edgeshed: sheds new TCP connections at XDP/TC when a service is overloaded");
  app->require_subcommand(1);
  app->add_flag("-v,--verbose", ctx.verbose, "Log libbpf's diagnostics too");
  if (const char* dir = std::getenv("EDGESHED_RUN_DIR"); dir && *dir) ctx.run_dir = dir;
  app->add_option("--run-dir", ctx.run_dir,
                  "The daemon's run directory (state, level, control socket); "
                  "for `run`, where a config that cannot be read is reported; "
                  "env EDGESHED_RUN_DIR")
      ->capture_default_str();
  // One line: what is wrong, and where the help for it is.
  app->failure_message([](const CLI::App* root, const CLI::Error& e) {
    std::string where = "edgeshed";
    for (const CLI::App* a = root; a != nullptr;) {
      auto subs = a->get_subcommands();
      a = subs.empty() ? nullptr : subs.front();
      if (a) where += " " + a->get_name();
    }
    return "edgeshed: " + printable(e.what()) + " (see `" + printable(where) + " --help`)\n";
  });

  add_attach_command(*app, ctx);
  add_detach_command(*app, ctx);
  add_status_command(*app, ctx);
  add_top_command(*app, ctx);
  add_events_command(*app, ctx);
  add_tuning_commands(*app, ctx);
  add_policy_command(*app, ctx);
  add_run_command(*app, ctx);
  add_completion_command(*app, ctx);
  return app;
}

int run_cli(int argc, const char* const* argv, DaemonRunner run_daemon) {
  CliContext ctx;
  ctx.run_daemon = std::move(run_daemon);
  auto app = make_app(ctx);
  try {
    app->parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app->exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app->exit(e);
  } catch (const CLI::ParseError& e) {
    app->exit(e);
    return kUsageError;
  }
  spdlog::set_level(ctx.verbose ? spdlog::level::debug : spdlog::level::info);
  return ctx.run ? ctx.run() : kUsageError;
}

}  // namespace edgeshed
