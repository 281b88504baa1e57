#include <bpf/libbpf.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdarg>
#include <cstdio>

#include "cli/commands.h"

namespace {

// libbpf's own diagnostics (verifier logs among them) go through spdlog.
int libbpf_to_spdlog(libbpf_print_level level, const char* fmt, va_list args) {
  char line[1024];
  int n = vsnprintf(line, sizeof(line), fmt, args);
  std::string_view text(line,
                        n > 0 ? std::min<size_t>(static_cast<size_t>(n), sizeof(line) - 1) : 0);
  while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  // bpf_tc_hook_create on an interface that already has clsact: expected.
  if (text.find("Exclusivity flag on") != std::string_view::npos) level = LIBBPF_DEBUG;
  switch (level) {
    case LIBBPF_WARN:
      spdlog::warn("libbpf: {}", text);
      break;
    case LIBBPF_INFO:
      spdlog::debug("libbpf: {}", text);
      break;
    default:
      spdlog::trace("libbpf: {}", text);
  }
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  libbpf_set_print(libbpf_to_spdlog);
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");

  CLI::App app{"edgeshed: sheds new TCP connections at XDP/TC when a service is overloaded"};
  app.require_subcommand(1);
  bool verbose = false;
  app.add_flag("-v,--verbose", verbose, "Log libbpf's diagnostics too");

  edgeshed::CommandRunner run;
  edgeshed::add_attach_command(app, run);
  edgeshed::add_detach_command(app, run);
  edgeshed::add_policy_command(app, run);
  edgeshed::add_status_command(app, run);
  edgeshed::add_run_command(app, run);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;  // usage error
  }
  spdlog::set_level(verbose ? spdlog::level::debug : spdlog::level::info);
  return run ? run() : 2;
}
