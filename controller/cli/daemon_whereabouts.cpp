#include "cli/daemon_whereabouts.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <thread>

#include "cli/daemon_process.h"
#include "cli/daemon_reading.h"
#include "cli/interface_reading.h"
#include "cli/interface_targets.h"

namespace edgeshed {
namespace {

constexpr std::chrono::milliseconds kPoll{100};

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

}  // namespace

std::vector<DaemonProcess> daemon_processes() {
  std::vector<DaemonProcess> out;
  const std::string self = std::to_string(getpid());
  const std::string own_namespace = mount_namespace("self");
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string pid = entry.path().filename().string();
    if (pid == self || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    const int number = std::stoi(pid);
    if (!edgeshed_alive(number)) continue;  // only this binary's processes
    const auto argv = command_line(pid);
    if (std::find(argv.begin(), argv.end(), "run") == argv.end()) continue;
    const std::string ns = mount_namespace(pid);
    out.push_back({number, !ns.empty() && !own_namespace.empty() && ns != own_namespace});
  }
  return out;
}

Result<std::vector<std::string>> interfaces_for_status(const std::string& only,
                                                       const std::string& run_dir,
                                                       std::chrono::milliseconds wait) {
  auto targets = target_interfaces(only);
  if (targets) return targets;
  // Pins of other interfaces: the daemon has attached, and this one is not its.
  if (!attached_interfaces().empty()) return targets;
  const auto daemons = daemon_processes();
  for (const auto& d : daemons) {
    if (!d.other_mount_namespace) continue;
    return make_error(fmt::format(
        "{0}; the daemon (pid {1}) runs in another mount namespace, whose own /sys/fs/bpf holds "
        "its pins (`ip netns exec` mounts a /sys of its own): read them with `nsenter -t {1} -m "
        "-n edgeshed status`, or restart the daemon with `nsenter --net=/run/netns/NS edgeshed "
        "run ...`, which keeps the host's /sys",
        targets.error().message, d.pid));
  }
  if (!daemons.empty() && wait.count() > 0) {
    const int pid = daemons.front().pid;
    std::cerr << fmt::format("edgeshed: the daemon (pid {}) is starting: waiting up to {} s for "
                             "it to attach\n",
                             pid, std::chrono::duration<double>(wait).count());
    for (auto waited = std::chrono::milliseconds(0); waited < wait; waited += kPoll) {
      std::this_thread::sleep_for(kPoll);
      if (auto t = target_interfaces(only)) return t;
      if (!edgeshed_alive(pid)) break;
    }
    targets = target_interfaces(only);
    if (targets) return targets;
    if (edgeshed_alive(pid)) {
      return make_error(fmt::format("{}; the daemon (pid {}) is still starting after {} s: its "
                                    "log says what it waits for",
                                    targets.error().message, pid,
                                    std::chrono::duration<double>(wait).count()));
    }
  }
  return make_error(targets.error().message + "; " +
                    read_daemon(run_dir).health["why"].get<std::string>());
}

}  // namespace edgeshed
