#include "cli/daemon_process.h"

#include <csignal>

#include <cerrno>
#include <fstream>
#include <iterator>
#include <string>

namespace edgeshed {

bool edgeshed_alive(int pid) {
  if (pid <= 0 || (kill(pid, 0) != 0 && errno != EPERM)) return false;
  auto comm = [](const std::string& path) {
    std::ifstream in(path);
    std::string name;
    std::getline(in, name);
    return name;
  };
  return comm("/proc/" + std::to_string(pid) + "/comm") == comm("/proc/self/comm");
}

// After the ")" that ends the name: a name may hold spaces and parentheses.
char proc_state(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close = stat.rfind(')');
  return close == std::string::npos || close + 2 >= stat.size() ? 0 : stat[close + 2];
}

}  // namespace edgeshed
