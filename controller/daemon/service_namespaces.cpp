#include "daemon/service_namespaces.h"

#include <linux/magic.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>

#include "daemon/listening_namespace.h"

namespace edgeshed::daemon {
namespace {

std::string proc_netns(uint32_t pid) { return "/proc/" + std::to_string(pid) + "/ns/net"; }

// The namespace that file opens now.
Result<ServiceNamespace> inspect(const std::string& file) {
  struct statfs fs {};
  struct stat st {};
  if (::statfs(file.c_str(), &fs) != 0 || ::stat(file.c_str(), &st) != 0) {
    return make_error(file + ": " + std::strerror(errno));
  }
  if (fs.f_type != NSFS_MAGIC) return make_error(file + " is not a namespace file");
  return ServiceNamespace{static_cast<uint32_t>(st.st_ino), file, {}};
}

// The namespace of a process of the cgroup or of one below it: a pod's own
// cgroup holds none (cgroup v2 keeps processes in the leaves, its
// containers'). Every process is tried: the first may be exiting.
Result<ServiceNamespace> cgroup_netns(const std::string& cgroup) {
  std::error_code ec;
  if (!std::filesystem::is_directory(cgroup, ec)) return make_error("no such cgroup " + cgroup);
  std::deque<std::filesystem::path> pending{cgroup};
  while (!pending.empty()) {
    const auto dir = pending.front();
    pending.pop_front();
    std::ifstream procs(dir / "cgroup.procs");
    for (uint32_t pid = 0; procs >> pid;) {
      if (auto ns = inspect(proc_netns(pid))) return ns;
    }
    // The non-throwing overloads only: this runs in the daemon's tick.
    std::filesystem::directory_iterator it(dir, ec);
    for (; !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
      std::error_code kind;
      if (it->is_directory(kind)) pending.push_back(it->path());
    }
  }
  return make_error("no process in the cgroup " + cgroup);
}

}  // namespace

Result<ServiceNamespace> resolve_netns(const config::NetnsRef& ref) {
  switch (ref.kind) {
    case config::NetnsRef::Kind::kPid:
      return inspect(proc_netns(ref.pid));
    case config::NetnsRef::Kind::kCgroup:
      return cgroup_netns(ref.path);
    case config::NetnsRef::Kind::kListener:
      return namespace_listening_on(ref.port);
    case config::NetnsRef::Kind::kPath:
      break;
  }
  return inspect(ref.path);
}

Result<ServiceNamespace> ServiceNamespaces::resolve(const config::NetnsRef& ref,
                                                    const std::string& name,
                                                    Clock::time_point now) {
  // A listener is searched for over every process of the host: at most once
  // a second, and in between only checked to be where it was.
  constexpr auto kSearchEvery = std::chrono::seconds(1);
  if (ref.kind != config::NetnsRef::Kind::kListener) return resolve_netns(ref);
  const auto before = found_.find(name);
  const auto searched = searched_.find(name);
  if (before != found_.end() && searched != searched_.end() &&
      now - searched->second < kSearchEvery) {
    if (before->second.inode == EDGESHED_NETNS_NONE) {
      return make_error("no listener found at the last search");
    }
    auto still = inspect(before->second.file);
    // A container restarted in its pod keeps the namespace, not the cgroup.
    std::error_code ec;
    const bool cgroup_there =
        before->second.cgroup.empty() || std::filesystem::is_directory(before->second.cgroup, ec);
    if (still && still->inode == before->second.inode && cgroup_there) {
      still->cgroup = before->second.cgroup;
      return still;
    }
  }
  searched_[name] = now;
  return resolve_netns(ref);
}

bool ServiceNamespaces::refresh(const std::vector<config::PortConfig>& ports,
                                Clock::time_point at) {
  std::map<std::string, ServiceNamespace> now;
  for (const auto& p : ports) {
    if (!p.netns) continue;
    const std::string name = p.netns->describe();
    if (now.contains(name)) continue;
    auto ns = resolve(*p.netns, name, at);
    const auto before = found_.find(name);
    const bool was_there = before != found_.end() && before->second.inode != EDGESHED_NETNS_NONE;
    if (!ns) {
      if (before == found_.end() || was_there) {
        spdlog::warn("port {}: its network namespace ({}) is gone, nothing counted for it: {}",
                     p.port, name, ns.error().message);
      }
      now[name] = {EDGESHED_NETNS_NONE, "", ""};
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
        return a.first == b.first && a.second.inode == b.second.inode &&
               a.second.cgroup == b.second.cgroup;
      });
  std::erase_if(searched_, [&now](const auto& s) { return !now.contains(s.first); });
  found_ = std::move(now);
  return changed;
}

ServiceNamespaces::ServiceNamespaces() {
  const auto own = inspect("/proc/self/ns/net");
  own_inode_ = own ? own->inode : 0;
}

uint32_t ServiceNamespaces::inode_of(const config::PortConfig& port) const {
  if (!port.netns) return 0;
  const auto it = found_.find(port.netns->describe());
  if (it == found_.end()) return EDGESHED_NETNS_NONE;
  return it->second.inode == own_inode_ ? 0 : it->second.inode;
}

const ServiceNamespace* ServiceNamespaces::namespace_of(const config::PortConfig& port) const {
  if (!port.netns) return nullptr;
  const auto it = found_.find(port.netns->describe());
  const bool elsewhere = it != found_.end() && it->second.inode != EDGESHED_NETNS_NONE &&
                         it->second.inode != own_inode_;
  return elsewhere ? &it->second : nullptr;
}

const std::string* ServiceNamespaces::listener_cgroup(const config::PortConfig& port) const {
  if (!port.netns || port.netns->kind != config::NetnsRef::Kind::kListener) return nullptr;
  const auto it = found_.find(port.netns->describe());
  if (it == found_.end() || it->second.inode == EDGESHED_NETNS_NONE || it->second.cgroup.empty()) {
    return nullptr;
  }
  return &it->second.cgroup;
}

std::optional<bool> ServiceNamespaces::found(const config::NetnsRef& ref) const {
  const auto it = found_.find(ref.describe());
  if (it == found_.end()) return std::nullopt;
  return it->second.inode != EDGESHED_NETNS_NONE;
}

std::vector<ServiceNamespace> ServiceNamespaces::present() const {
  std::vector<ServiceNamespace> out;
  for (const auto& entry : found_) {
    const ServiceNamespace& ns = entry.second;
    // Two names of one namespace (a pod's path and its process) are one.
    const bool listed = std::any_of(
        out.begin(), out.end(), [&ns](const ServiceNamespace& o) { return o.inode == ns.inode; });
    if (ns.inode != EDGESHED_NETNS_NONE && ns.inode != own_inode_ && !listed) out.push_back(ns);
  }
  return out;
}

}  // namespace edgeshed::daemon
