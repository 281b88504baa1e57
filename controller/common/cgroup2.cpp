#include "common/cgroup2.h"

#include <fstream>
#include <sstream>

namespace edgeshed {

std::string cgroup2_mount() {
  std::ifstream mounts("/proc/self/mountinfo");
  std::string line;
  while (std::getline(mounts, line)) {
    // "... mount-point options ... - cgroup2 source super-options"
    const auto dash = line.find(" - cgroup2 ");
    if (dash == std::string::npos) continue;
    std::istringstream fields(line.substr(0, dash));
    std::string id, parent, dev, root, point;
    fields >> id >> parent >> dev >> root >> point;
    return point;
  }
  return {};
}

std::string process_cgroup2(const std::string& proc_dir) {
  std::ifstream groups(proc_dir + "/cgroup");
  std::string line;
  // cgroup v2's line is the one of hierarchy 0, with no controllers.
  while (std::getline(groups, line)) {
    if (line.rfind("0::", 0) == 0) return line.substr(3);
  }
  return {};
}

}  // namespace edgeshed
