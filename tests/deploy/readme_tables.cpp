// Prints the README's generated tables from the code they describe:
//   readme_tables signals   the signal kinds (signals/signal_kinds.cpp)
//   readme_tables limits    the limit algorithms, the default marked
//   readme_tables commands  every command of the CLI, its arguments, options
//                           and description, from the CLI11 app itself
// scripts/gen_readme.sh puts them between the README's markers, and
// deploy.readme fails when the README's copy differs.
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/app.h"
#include "config/reference.h"
#include "signals/signal_kinds.h"

namespace {

using namespace edgeshed;

// A table cell: a '|' would end it.
std::string cell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

void signal_kinds() {
  std::cout << "| signal kind | value |\n|---|---|\n";
  for (const edgeshed::signals::SignalKindEntry& e : edgeshed::signals::signal_kinds()) {
    std::cout << "| `" << e.name << "` | " << cell(e.kind.meaning) << " |\n";
  }
}

void limits() {
  const auto fallback = static_cast<std::size_t>(law::LimitConfig{}.algorithm);
  std::cout << "| `limit.algorithm` | how the limit on requests in service moves |\n|---|---|\n";
  for (std::size_t i = 0; i < names::kLimitAlgorithms.size(); ++i) {
    std::cout << "| `" << names::kLimitAlgorithms[i] << "`" << (i == fallback ? " (default)" : "")
              << " | " << cell(config::reference::kLimitAlgorithmMeanings[i]) << " |\n";
  }
}

// "MODE" with its choices ("off|observe|enforce"); an optional one, whose
// words are only suggested (reset's), by name in brackets.
std::string positional(const CLI::Option& opt, const CliContext& ctx) {
  if (!opt.get_required()) return "[" + opt.get_name() + "]";
  auto it = ctx.choices.find(&opt);
  if (it == ctx.choices.end()) return opt.get_name();
  std::string text;
  for (const auto& c : it->second) text += (text.empty() ? "" : "|") + c;
  return text;
}

void command_rows(const CLI::App& app, const std::string& path, const CliContext& ctx) {
  const auto subs = app.get_subcommands({});
  if (!path.empty() && (subs.empty() || !app.get_require_subcommand_min())) {
    std::string usage = path;
    std::string options;
    for (const CLI::Option* opt : app.get_options()) {
      if (opt->get_positional() && opt->get_lnames().empty() && opt->get_snames().empty()) {
        usage += " " + positional(*opt, ctx);
        continue;
      }
      const std::string& name =
          opt->get_lnames().empty() ? opt->get_snames().front() : opt->get_lnames().front();
      if (name == "help" || name == "run-dir") continue;
      const std::string flag = (opt->get_lnames().empty() ? "-" : "--") + name;
      options += (options.empty() ? "" : ", ") + std::string("`") + flag +
                 (opt->get_required() ? "` (required)" : "`");
    }
    std::cout << "| `" << cell(usage) << "` | " << cell(app.get_description()) << " | "
              << cell(options.empty() ? "" : options) << " |\n";
  }
  for (const CLI::App* sub : subs) {
    command_rows(*sub, path.empty() ? "edgeshed " + sub->get_name() : path + " " + sub->get_name(),
                 ctx);
  }
}

void commands() {
  CliContext ctx;
  auto app = make_app(ctx);
  std::cout << "| command | what it does | options (each has `--help` and `--run-dir`) |\n"
               "|---|---|---|\n";
  command_rows(*app, "", ctx);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string_view what = argc == 2 ? argv[1] : "";
  if (what == "signals") {
    signal_kinds();
  } else if (what == "limits") {
    limits();
  } else if (what == "commands") {
    commands();
  } else {
    std::cerr << "usage: readme_tables signals|limits|commands\n";
    return 2;
  }
  return 0;
}
