#include "daemon/listening_namespace.h"

#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace edgeshed::daemon {
namespace {

// /proc/net/tcp's state column (include/net/tcp_states.h, TCP_LISTEN).
constexpr std::string_view kListenState = "0A";

// Whether a /proc/PID/net/tcp or tcp6 lists a socket listening on port:
// "sl local_address rem_address st ...", the address ADDR:PORT in hex.
bool lists_listener(const std::string& file, uint16_t port) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);  // the header
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state;
    if (!(fields >> slot >> local >> remote >> state) || state != kListenState) continue;
    const auto colon = local.rfind(':');
    if (colon == std::string::npos) continue;
    unsigned value = 0;
    const char* first = local.data() + colon + 1;
    const char* last = local.data() + local.size();
    if (std::from_chars(first, last, value, 16).ptr == last && value == port) return true;
  }
  return false;
}

// A process of each network namespace the host's processes are in.
std::map<uint32_t, uint32_t> process_namespaces() {
  std::map<uint32_t, uint32_t> out;  // inode -> a pid in it
  std::error_code ec;
  // The non-throwing overloads only: this runs in the daemon's tick.
  std::filesystem::directory_iterator it("/proc", ec);
  for (; !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    uint32_t pid = 0;
    if (std::from_chars(name.data(), name.data() + name.size(), pid).ptr !=
        name.data() + name.size()) {
      continue;
    }
    struct stat st {};
    // Gone since the listing, or another user's without CAP_SYS_PTRACE.
    if (::stat(("/proc/" + name + "/ns/net").c_str(), &st) != 0) continue;
    out.emplace(static_cast<uint32_t>(st.st_ino), pid);
  }
  return out;
}

}  // namespace

Result<ServiceNamespace> namespace_listening_on(uint16_t port) {
  std::vector<ServiceNamespace> listening;
  for (const auto& [inode, pid] : process_namespaces()) {
    const std::string dir = "/proc/" + std::to_string(pid);
    if (lists_listener(dir + "/net/tcp", port) || lists_listener(dir + "/net/tcp6", port)) {
      listening.push_back({inode, dir + "/ns/net"});
    }
  }
  if (listening.empty()) {
    return make_error("no network namespace listens on port " + std::to_string(port));
  }
  if (listening.size() > 1) {
    std::string which;
    for (const auto& ns : listening) {
      which += (which.empty() ? "" : ", ") + std::string("net:[") + std::to_string(ns.inode) + "]";
    }
    return make_error(std::to_string(listening.size()) + " network namespaces listen on port " +
                      std::to_string(port) + " (" + which +
                      "): name the service's with netns, pid or cgroup");
  }
  return listening.front();
}

}  // namespace edgeshed::daemon
