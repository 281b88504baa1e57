// The edgeshed binary: the command line, with the daemon behind its `run`.
// The one place that ties the two together; the CLI itself knows the daemon
// only through controller/ipc/.
#include <bpf/libbpf.h>
#include <spdlog/spdlog.h>

#include <cstdarg>
#include <cstdio>
#include <iostream>

#include "cli/app.h"
#include "daemon/config_check.h"
#include "daemon/daemon.h"

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
  // Looking for edgeshed's TC filters on an interface without clsact (the
  // XDP hook, no request filter): the normal case, not a problem.
  if (text.find("Parent Qdisc doesn't exist") != std::string_view::npos) level = LIBBPF_DEBUG;
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

int run_daemon(const std::string& config_path, const std::string& run_dir, bool run_dir_given) {
  auto d = edgeshed::daemon::Daemon::start(config_path, {run_dir, run_dir_given});
  if (!d) return edgeshed::fail(d.error().message);
  return (*d)->run();
}

// The plan on stdout; why `run` would refuse, on stderr.
int check_config(const std::string& config_path, const std::string& run_dir) {
  const auto check = edgeshed::daemon::check_config(config_path, run_dir);
  for (const auto& line : check.plan) std::cout << line << "\n";
  for (const auto& problem : check.problems) {
    std::cerr << "edgeshed: `run` would refuse this config: " << problem << "\n";
  }
  if (!check.problems.empty()) return 1;
  std::cout << "ok: `edgeshed run --config " << config_path << "` would start\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  libbpf_set_print(libbpf_to_spdlog);
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  return edgeshed::run_cli(argc, argv, run_daemon, check_config);
}
