// Where the services of the ports that name a network namespace (a
// container's) run now: each `netns`, `pid` or `cgroup` of the config
// resolved to the namespace's inode, which the tracker compares, and a file
// that opens it. Resolved again every tick: pods come and go, and a new pod
// on the same port is a new namespace.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "config/config.h"
#include "edgeshed/abi.h"

namespace edgeshed::daemon {

struct ServiceNamespace {
  uint32_t inode = 0;
  std::string file;  // an nsfs file that opens it
  // Found by its listener: the cgroup v2 folder of the process holding the
  // listening socket, where its requests can be timed; empty: none (not
  // cgroup v2, the root, or not found by its listener).
  std::string cgroup;
};

// The namespace that ref names now; an error says why there is none (the
// process gone, the cgroup empty, the file not a network namespace).
Result<ServiceNamespace> resolve_netns(const config::NetnsRef& ref);

class ServiceNamespaces {
 public:
  using Clock = std::chrono::steady_clock;

  ServiceNamespaces();

  // Resolves the namespace of every port that names one; true when one is
  // not where the last call found it. Logs each change.
  bool refresh(const std::vector<config::PortConfig>& ports, Clock::time_point at = Clock::now());
  // What the port's map entry names: 0 for the interface's namespace (the
  // daemon's, also where a port names it, as a host network pod's listener
  // would), EDGESHED_NETNS_NONE while the port's namespace is gone.
  uint32_t inode_of(const config::PortConfig& port) const;
  // Where port's service runs now; none in the interface's namespace and
  // while the port's is gone.
  const ServiceNamespace* namespace_of(const config::PortConfig& port) const;
  // The cgroup of the process listening for port's service, where the port
  // names it by its listener and one was found; null otherwise.
  const std::string* listener_cgroup(const config::PortConfig& port) const;
  // Whether ref's namespace was found at the last refresh; none when no
  // configured port names it.
  std::optional<bool> found(const config::NetnsRef& ref) const;
  // Each namespace found but the daemon's own, once, for work done inside it.
  std::vector<ServiceNamespace> present() const;

 private:
  Result<ServiceNamespace> resolve(const config::NetnsRef& ref, const std::string& name,
                                   Clock::time_point now);

  // The daemon's (and its interfaces') network namespace.
  uint32_t own_inode_;
  // By NetnsRef::describe(); inode EDGESHED_NETNS_NONE: gone.
  std::map<std::string, ServiceNamespace> found_;
  // When each listener was last searched for.
  std::map<std::string, Clock::time_point> searched_;
};

}  // namespace edgeshed::daemon
