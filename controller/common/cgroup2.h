// Where cgroup v2 lives and which of its folders a process is in: what
// the request timers attach to for a service found by its listener.
#pragma once

#include <cstdint>
#include <string>

namespace edgeshed {

// Where cgroup v2 is mounted (/sys/fs/cgroup, or /sys/fs/cgroup/unified on
// a hybrid host); empty when it is not.
std::string cgroup2_mount();

// A process's cgroup v2 folder, relative to the mount ("/a/b", "/" for the
// root); empty when it cannot be read (the process gone).
std::string process_cgroup2(const std::string& proc_dir);

}  // namespace edgeshed
