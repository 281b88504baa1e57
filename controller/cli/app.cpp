#include "cli/app.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <iostream>
#include <optional>
#include <string_view>
#include <utility>

#include "cli/privileges.h"
#include "cli/usage_message.h"
#include "cli/version.h"
#include "common/edit_distance.h"
#include "common/join.h"

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

// --run-dir on the program and on every subcommand, so that it may come
// anywhere on the command line and shows in each one's --help.
void add_run_dir_options(CLI::App& app, CliContext& ctx) {
  app.add_option("--run-dir", ctx.run_dir,
                 "The daemon's run directory (state, level, control socket); for `run`, it "
                 "wins over the config's daemon.run_dir; env EDGESHED_RUN_DIR")
      ->capture_default_str()
      ->each([&ctx](const std::string&) { ctx.run_dir_given = true; });
  for (CLI::App* sub : app.get_subcommands({})) add_run_dir_options(*sub, ctx);
}

// The subcommands chosen, outermost first: {"port", "add"}.
std::vector<std::string> chosen_path(const CLI::App& root) {
  std::vector<std::string> path;
  for (const CLI::App* a = &root; a != nullptr;) {
    auto subs = a->get_subcommands();
    a = subs.empty() ? nullptr : subs.front();
    if (a) path.push_back(a->get_name());
  }
  return path;
}

// "edgeshed port add": the command chosen, as typed.
std::string command_name(const CLI::App& root) {
  const auto path = chosen_path(root);
  return path.empty() ? "edgeshed" : "edgeshed " + join(path, " ");
}

// "unknown command 'stauts'; did you mean 'status'?" when the first word
// left over by a parse stood where the deepest command chosen expects a
// subcommand; nothing otherwise.
std::optional<std::string> unknown_subcommand(const CLI::App& root) {
  const CLI::App* deepest = &root;
  while (!deepest->get_subcommands().empty()) deepest = deepest->get_subcommands().front();
  std::vector<std::string> names;
  for (const CLI::App* s : deepest->get_subcommands({})) names.push_back(s->get_name());
  if (names.empty()) return std::nullopt;
  std::string word;
  for (const auto& w : deepest->remaining()) {
    if (!w.starts_with("-")) {
      word = w;
      break;
    }
  }
  if (word.empty()) return std::nullopt;
  const std::string where = command_name(root);
  std::string message = "unknown command '" + printable(word) + "'";
  const std::string* closest =
      closest_name(word, names, std::max<std::size_t>(3, word.size() / 2));  // near misses only
  if (closest != nullptr) message += "; did you mean '" + *closest + "'?";
  return message + " (" + where + " has: " + join(names, ", ") + "; see `" + where + " --help`)";
}

}  // namespace

CLI::Option* CliContext::choose(CLI::Option* opt, std::vector<std::string> values) {
  opt->check(CLI::IsMember(values));
  choices[opt] = std::move(values);
  return opt;
}

CLI::Option* CliContext::suggest(CLI::Option* opt, std::vector<std::string> values) {
  choices[opt] = std::move(values);
  return opt;
}

std::unique_ptr<CLI::App> make_app(CliContext& ctx) {
  auto app = std::make_unique<CLI::App>(
      "edgeshed: sheds new TCP connections at XDP/TC when a service is overloaded");
  app->require_subcommand(1);
  app->add_flag("-v,--verbose", ctx.verbose, "Log libbpf's diagnostics too");
  app->set_version_flag("--version", version_text,
                        "Print the version, the data plane's ABI, "
                        "libbpf's version and the kernel's, and exit");
  if (const char* dir = std::getenv("EDGESHED_RUN_DIR"); dir && *dir) {
    ctx.run_dir = dir;
    ctx.run_dir_given = true;
  }
  // One line: what is wrong, and where the help for it is.
  app->failure_message([](const CLI::App* root, const CLI::Error& e) {
    const std::string where = command_name(*root);
    return "edgeshed: " + printable(usage_message(e.what())) + " (see `" + printable(where) +
           " --help`)\n";
  });

  add_attach_command(*app, ctx);
  add_detach_command(*app, ctx);
  add_status_command(*app, ctx);
  add_top_command(*app, ctx);
  add_events_command(*app, ctx);
  add_tuning_commands(*app, ctx);
  add_policy_command(*app, ctx);
  add_run_command(*app, ctx);
  add_check_command(*app, ctx);
  add_completion_command(*app, ctx);
  add_run_dir_options(*app, ctx);
  return app;
}

int run_cli(int argc, const char* const* argv, DaemonRunner run_daemon,
            ConfigChecker check_config) {
  CliContext ctx;
  ctx.run_daemon = std::move(run_daemon);
  ctx.check_config = std::move(check_config);
  auto app = make_app(ctx);
  try {
    app->parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app->exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app->exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app->exit(e);
  } catch (const CLI::ParseError& e) {
    if (auto unknown = unknown_subcommand(*app)) {
      std::cerr << "edgeshed: " << *unknown << "\n";
      return kUsageError;
    }
    app->exit(e);
    return kUsageError;
  }
  spdlog::set_level(ctx.verbose ? spdlog::level::debug : spdlog::level::info);
  if (!ctx.run) return kUsageError;
  // Permission first: without it, every later step fails for a reason that
  // is not the cause.
  if (auto s = check_privilege(privilege_of(chosen_path(*app)), command_name(*app)); !s) {
    return fail(s.error().message);
  }
  return ctx.run();
}

}  // namespace edgeshed
