#include "daemon/service_namespaces.h"

#include <linux/magic.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <optional>

namespace edgeshed::daemon {
namespace {

std::string proc_netns(uint32_t pid) { return "/proc/" + std::to_string(pid) + "/ns/net"; }

// A process of the cgroup or of one below it: a pod's own cgroup holds
// none (cgroup v2 keeps processes in the leaves, its containers').
std::optional<uint32_t> first_process(const std::filesystem::path& cgroup) {
  std::deque<std::filesystem::path> pending{cgroup};
  while (!pending.empty()) {
    const auto dir = pending.front();
    pending.pop_front();
    std::ifstream procs(dir / "cgroup.procs");
    uint32_t pid = 0;
    if (procs >> pid) return pid;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      if (entry.is_directory(ec)) pending.push_back(entry.path());
    }
  }
  return std::nullopt;
}

}  // namespace

Result<ServiceNamespace> resolve_netns(const config::NetnsRef& ref) {
  ServiceNamespace ns;
  switch (ref.kind) {
    case config::NetnsRef::Kind::kPath:
      ns.file = ref.path;
      break;
    case config::NetnsRef::Kind::kPid:
      ns.file = proc_netns(ref.pid);
      break;
    case config::NetnsRef::Kind::kCgroup: {
      if (!std::filesystem::is_directory(ref.path)) return make_error("no such cgroup");
      const auto pid = first_process(ref.path);
      if (!pid) return make_error("no process in the cgroup");
      ns.file = proc_netns(*pid);
      break;
    }
  }
  struct statfs fs {};
  struct stat st {};
  if (::statfs(ns.file.c_str(), &fs) != 0 || ::stat(ns.file.c_str(), &st) != 0) {
    return make_error(ns.file + ": " + std::strerror(errno));
  }
  if (fs.f_type != NSFS_MAGIC) return make_error(ns.file + " is not a namespace file");
  ns.inode = static_cast<uint32_t>(st.st_ino);
  return ns;
}

bool ServiceNamespaces::refresh(const std::vector<config::PortConfig>& ports) {
  std::map<std::string, ServiceNamespace> now;
  for (const auto& p : ports) {
    if (!p.netns) continue;
    const std::string name = p.netns->describe();
    if (now.contains(name)) continue;
    auto ns = resolve_netns(*p.netns);
    const auto before = found_.find(name);
    const bool was_there = before != found_.end() && before->second.inode != EDGESHED_NETNS_NONE;
    if (!ns) {
      if (before == found_.end() || was_there) {
        spdlog::warn("port {}: its network namespace ({}) is gone, nothing counted for it: {}",
                     p.port, name, ns.error().message);
      }
      now[name] = {EDGESHED_NETNS_NONE, ""};
      continue;
    }
    if (!was_there || before->second.inode != ns->inode) {
      spdlog::info("port {}: its service runs in network namespace net:[{}] ({})", p.port,
                   ns->inode, name);
    }
    now[name] = std::move(*ns);
  }
  const bool changed =
      now.size() != found_.size() ||
      !std::equal(now.begin(), now.end(), found_.begin(), [](const auto& a, const auto& b) {
        return a.first == b.first && a.second.inode == b.second.inode;
      });
  found_ = std::move(now);
  return changed;
}

uint32_t ServiceNamespaces::inode_of(const config::PortConfig& port) const {
  if (!port.netns) return 0;
  const auto it = found_.find(port.netns->describe());
  return it == found_.end() ? EDGESHED_NETNS_NONE : it->second.inode;
}

std::vector<std::string> ServiceNamespaces::files() const {
  std::vector<std::string> out;
  for (const auto& [name, ns] : found_) {
    if (ns.inode != EDGESHED_NETNS_NONE) out.push_back(ns.file);
  }
  return out;
}

}  // namespace edgeshed::daemon
