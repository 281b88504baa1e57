// The edgeshed processes of this pid namespace running one subcommand:
// the daemon (`run`) that status looks for, the other `events` readers that
// would split the ring with this one.
#pragma once

#include <string_view>
#include <vector>

namespace edgeshed {

struct EdgeshedProcess {
  int pid = 0;
  // Its mount namespace is not this process's: its /sys/fs/bpf is another.
  bool other_mount_namespace = false;
  double age_s = 0;  // since it started
};

// Every process of this binary whose command line names `subcommand`, but
// this one.
std::vector<EdgeshedProcess> edgeshed_processes(std::string_view subcommand);

}  // namespace edgeshed
