#include "cli/daemon_whereabouts.h"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <thread>

#include "cli/daemon_process.h"
#include "cli/daemon_reading.h"
#include "cli/edgeshed_processes.h"
#include "cli/interface_reading.h"
#include "cli/interface_targets.h"
#include "dataplane/attach.h"
#include "dataplane/maps.h"

namespace edgeshed {
namespace {

constexpr std::chrono::milliseconds kPoll{100};
constexpr std::chrono::milliseconds kExecGrace{300};
// A daemon younger than this, with no state written, is taken for starting.
constexpr std::chrono::duration<double> kStartingFor{10.0};

// Whether every interface to show has its whole data plane pinned: then
// there is nothing to wait for, whatever daemon is starting (another one,
// with a run directory of its own, may be).
bool all_readable(const Result<std::vector<std::string>>& targets) {
  if (!targets || targets->empty()) return false;
  return std::all_of(targets->begin(), targets->end(), [](const std::string& iface) {
    return static_cast<bool>(Maps::open_pinned(pin_dir_for(iface)));
  });
}

}  // namespace

Result<std::vector<std::string>> interfaces_for_status(const std::string& only,
                                                       const std::string& run_dir,
                                                       std::chrono::milliseconds wait) {
  auto targets = target_interfaces(only);
  const bool none_attached = attached_interfaces().empty();
  auto daemons = edgeshed_processes("run");
  if (none_attached && daemons.empty() && wait.count() > 0) {
    // `run &` then `status`: the daemon may not have exec'd yet.
    std::this_thread::sleep_for(kExecGrace);
    daemons = edgeshed_processes("run");
  }
  if (none_attached) {
    for (const auto& d : daemons) {
      if (!d.other_mount_namespace) continue;
      return make_error(fmt::format(
          "{0}; the daemon (pid {1}) runs in another mount namespace, whose own /sys/fs/bpf "
          "holds its pins (`ip netns exec` mounts a /sys of its own): read them with `nsenter -t "
          "{1} -m -n edgeshed status`, or restart the daemon with `nsenter --net=/run/netns/NS "
          "edgeshed run ...`, which keeps the host's /sys",
          targets ? std::string("its pins are not here") : targets.error().message, d.pid));
    }
  }
  // A daemon that started moments ago and has not written its state yet is
  // still attaching: its pins may be missing or half made.
  const auto starting = std::find_if(daemons.begin(), daemons.end(), [](const auto& d) {
    return !d.other_mount_namespace && d.age_s < kStartingFor.count();
  });
  if (starting != daemons.end() && wait.count() > 0 && !all_readable(targets) &&
      read_daemon(run_dir).state.is_null()) {
    const int pid = starting->pid;
    std::cerr << fmt::format(
        "edgeshed: the daemon (pid {}) is starting: waiting up to {} s for "
        "it to attach\n",
        pid, std::chrono::duration<double>(wait).count());
    for (auto waited = std::chrono::milliseconds(0);
         waited < wait && edgeshed_alive(pid) && read_daemon(run_dir).state.is_null();
         waited += kPoll) {
      std::this_thread::sleep_for(kPoll);
    }
    targets = target_interfaces(only);
    if (!targets && edgeshed_alive(pid) && read_daemon(run_dir).state.is_null()) {
      return make_error(
          fmt::format("{}; the daemon (pid {}) is still starting after {} s: its "
                      "log says what it waits for",
                      targets.error().message, pid, std::chrono::duration<double>(wait).count()));
    }
  }
  if (targets) return targets;
  return make_error(targets.error().message + "; " +
                    read_daemon(run_dir).health["why"].get<std::string>());
}

}  // namespace edgeshed
