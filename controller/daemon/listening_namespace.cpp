#include "daemon/listening_namespace.h"

#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "common/cgroup2.h"

namespace edgeshed::daemon {
namespace {

// /proc/net/tcp's state column (include/net/tcp_states.h, TCP_LISTEN).
constexpr std::string_view kListenState = "0A";

// The inode of the socket a /proc/PID/net/tcp or tcp6 lists listening on
// port: "sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout
// inode ...", the address ADDR:PORT in hex.
std::optional<uint64_t> listener_socket(const std::string& file, uint16_t port) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);  // the header
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout;
    uint64_t inode = 0;
    if (!(fields >> slot >> local >> remote >> state) || state != kListenState) continue;
    const auto colon = local.rfind(':');
    if (colon == std::string::npos) continue;
    unsigned value = 0;
    const char* first = local.data() + colon + 1;
    const char* last = local.data() + local.size();
    if (std::from_chars(first, last, value, 16).ptr != last || value != port) continue;
    fields >> queues >> timer >> retransmits >> uid >> timeout >> inode;
    return inode;
  }
  return std::nullopt;
}

// Whether /proc/PID (proc_dir) holds a descriptor of the socket.
bool holds_socket(const std::filesystem::path& proc_dir, uint64_t socket) {
  const std::string want = "socket:[" + std::to_string(socket) + "]";
  std::error_code ec;
  std::filesystem::directory_iterator it(proc_dir / "fd", ec);
  for (; !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    std::error_code link_ec;
    if (std::filesystem::read_symlink(it->path(), link_ec).string() == want) return true;
  }
  return false;
}

// The processes of each network namespace the host's processes are in.
std::map<uint32_t, std::vector<uint32_t>> process_namespaces() {
  std::map<uint32_t, std::vector<uint32_t>> out;  // inode -> the pids in it
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
    out[static_cast<uint32_t>(st.st_ino)].push_back(pid);
  }
  return out;
}

// The cgroup v2 folder of the process that holds the listening socket (its
// accepted sockets are that cgroup's); empty where none is found, or where
// it is the root (the timers there would run for every socket).
std::string listener_cgroup(const std::vector<uint32_t>& pids, uint64_t socket) {
  const std::string mount = cgroup2_mount();
  if (mount.empty()) return {};
  for (uint32_t pid : pids) {
    const std::filesystem::path dir = "/proc/" + std::to_string(pid);
    if (!holds_socket(dir, socket)) continue;
    const std::string folder = process_cgroup2(dir.string());
    return folder.empty() || folder == "/" ? std::string() : mount + folder;
  }
  return {};
}

}  // namespace

Result<ServiceNamespace> namespace_listening_on(uint16_t port) {
  std::vector<ServiceNamespace> listening;
  for (const auto& [inode, pids] : process_namespaces()) {
    const std::string dir = "/proc/" + std::to_string(pids.front());
    auto socket = listener_socket(dir + "/net/tcp", port);
    if (!socket) socket = listener_socket(dir + "/net/tcp6", port);
    if (socket) listening.push_back({inode, dir + "/ns/net", listener_cgroup(pids, *socket)});
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
