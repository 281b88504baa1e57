#include "cli/edgeshed_processes.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "cli/daemon_process.h"

namespace edgeshed {
namespace {

// argv of a process, NUL-separated in /proc/PID/cmdline.
std::vector<std::string> command_line(const std::string& pid) {
  std::ifstream in("/proc/" + pid + "/cmdline");
  const std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> out;
  std::string word;
  for (char c : raw) {
    if (c == '\0') {
      out.push_back(std::move(word));
      word.clear();
    } else {
      word += c;
    }
  }
  return out;
}

std::string mount_namespace(const std::string& pid) {
  std::error_code ec;
  return std::filesystem::read_symlink("/proc/" + pid + "/ns/mnt", ec).string();
}

// Seconds since the process started: /proc/PID/stat's starttime (field 22,
// in clock ticks since boot) against /proc/uptime.
double age_of(const std::string& pid) {
  std::ifstream stat_file("/proc/" + pid + "/stat");
  const std::string stat((std::istreambuf_iterator<char>(stat_file)),
                         std::istreambuf_iterator<char>());
  const auto close = stat.rfind(')');  // a name may hold spaces
  if (close == std::string::npos) return 0;
  std::istringstream fields(stat.substr(close + 2));
  std::string field;
  unsigned long long start_ticks = 0;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
    if (i == 22) start_ticks = std::stoull(field);
  }
  std::ifstream uptime_file("/proc/uptime");
  double uptime = 0;
  uptime_file >> uptime;
  return uptime - static_cast<double>(start_ticks) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

}  // namespace

std::vector<EdgeshedProcess> edgeshed_processes(std::string_view subcommand) {
  std::vector<EdgeshedProcess> out;
  const std::string self = std::to_string(getpid());
  const std::string own_namespace = mount_namespace("self");
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string pid = entry.path().filename().string();
    if (pid == self || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    const int number = std::stoi(pid);
    if (!edgeshed_alive(number)) continue;  // only this binary's processes
    const auto argv = command_line(pid);
    if (std::find(argv.begin(), argv.end(), std::string(subcommand)) == argv.end()) continue;
    const std::string ns = mount_namespace(pid);
    out.push_back(
        {number, !ns.empty() && !own_namespace.empty() && ns != own_namespace, age_of(pid)});
  }
  return out;
}

}  // namespace edgeshed
