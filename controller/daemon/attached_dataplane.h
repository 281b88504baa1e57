// The data planes of the configured interfaces, as the daemon attached (or
// adopted) them: attaching, the settings that follow the config (ports,
// prefixes, the config map's rarely changing fields) and what is left at
// exit. The production DataplaneAccess of the tick.
#pragma once

#include <array>
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "config/config.h"
#include "daemon/dataplane_access.h"
#include "daemon/log_limiter.h"
#include "daemon/service_namespaces.h"
#include "dataplane/accept_queue.h"
#include "dataplane/destinations.h"
#include "dataplane/inflight_seed.h"
#include "dataplane/maps.h"
#include "dataplane/request_filter.h"
#include "dataplane/request_timers.h"

namespace edgeshed::daemon {

class AttachedDataplane final : public DataplaneAccess {
 public:
  // Attaches to every interface of cfg; effective is cfg with the
  // operator's runtime changes applied (they decide the action). If one
  // fails, those attached fresh before it are detached again.
  Status attach_all(const config::Config& cfg, const config::Config& effective);
  // A start that fails after attach_all: detaches what this start attached
  // fresh (filters, qdiscs, pins), and leaves alone what it adopted.
  void detach_fresh();
  // Ports, prefixes and the rarely changing config fields of cfg (the
  // effective config), on every interface. The mode is the tick's to write.
  Status apply_settings(const config::Config& cfg);
  // The host's local routes (read now), its services' namespaces' and the
  // configured, into every interface's destination tries: at a reload,
  // and when the routes change.
  Status refresh_destinations(const std::vector<IpPrefix>& configured);
  // Every tick, while a port names a namespace: when one came, went or was
  // replaced, the settings again (the ports' inodes, the seed walk, the
  // destinations); else, once a second, its addresses (a pod's come after
  // its namespace).
  Status follow_namespaces(const config::Config& cfg);
  // For on_exit = detach.
  void detach_all();
  // Where the ports' services that name a namespace run now.
  const ServiceNamespaces& namespaces() const { return namespaces_; }

  // The namespaces that serve a port number another namespace serves too
  // are services of their own (abi.h), each with a law of its own; the
  // host's law (service 0) has the other ports. Their ids now, and what
  // names each one's namespace.
  std::vector<uint32_t> services() const;
  std::string service_name(uint32_t service) const;
  // A service's counts (its groups), takes its peaks; and its latency.
  Result<LiveCounts> take_service_counts(size_t i, uint32_t service) const;
  Result<std::vector<PortLatency>> read_service_latency(size_t i, uint32_t service) const;
  Result<ClassCounts> read_service_sheds(size_t i, uint32_t service) const {
    return interfaces_[i].maps.read_group_sheds(service);
  }
  // Its policies, written with service 0's at the next publish (one set:
  // a SYN sees one tick's policy of every service).
  void set_service_policies(uint32_t service, const edgeshed_policy_set& set);
  // At a stop that fails open: every service admits all at the last publish.
  void forget_service_policies() { service_policies_ = {}; }

  size_t interface_count() const override { return interfaces_.size(); }
  const std::string& interface_name(size_t i) const override { return interfaces_[i].name; }
  Result<LiveCounts> take_live_counts(size_t i) const override;
  Result<edgeshed_stats> read_stats(size_t i) const override;
  Result<std::vector<PortLatency>> read_latency(size_t i) const override;
  Result<edgeshed_config> read_config(size_t i) const override;
  Status write_config(size_t i, const edgeshed_config& cfg) const override;
  Status publish(size_t i, const edgeshed_policy_set& set, uint64_t heartbeat_ns,
                 uint32_t salt) const override;
  Result<signals::QueueSnapshot> read_accept_queues() override;
  Result<std::vector<IdleConnection>> idle_connections(size_t i) override;
  Status reclaim(size_t i, const std::vector<uint64_t>& cookies) override;

 private:
  struct Interface {
    std::string name;
    Maps maps;
    InflightSeed seed;
    RequestFilter requests;
    IdleConnections idle;
    RequestTimers timers;
    DestinationMaps destinations;
    bool adopted;  // attached before this daemon started
  };
  // The port map, the request filter and the seed walk: what a namespace
  // that comes or goes changes.
  Status apply_ports(const std::vector<config::PortConfig>& ports);
  // The local routes of each service namespace found, read inside it.
  std::vector<Destination> namespace_routes();
  // The cgroup folder whose sockets time port's requests, if any: a TCP
  // port's that names its service by cgroup, or by its listener (the
  // cgroup of the process holding it).
  const std::string* timing_cgroup(const config::PortConfig& port) const;
  // Links the timers each port needs on iface (a TCP port with a
  // timing_cgroup() is timed there, any other at the tracepoints), and says
  // which times each port: written into the port map after.
  Result<std::vector<uint8_t>> link_timers(Interface& iface,
                                           const std::vector<config::PortConfig>& ports);
  // Whether a cgroup that times a port is not linked as it is now (made
  // anew under its name, or come back).
  bool cgroups_to_relink(const std::vector<config::PortConfig>& ports) const;
  // Unlinks what no port of the map just written needs.
  Status unlink_unused_timers(Interface& iface, const std::vector<config::PortConfig>& ports,
                              const std::vector<uint8_t>& timers);
  // For each port: its service of its own where its number is served in
  // several namespaces (and none: not served, its namespace gone), else 0.
  struct PortService {
    bool served = true;
    uint8_t service = 0;
    uint64_t netns_cookie = 0;
  };
  std::vector<PortService> port_services(const std::vector<config::PortConfig>& ports);
  // The cookie of the namespace port's service runs in; 0 while it is gone.
  Result<uint64_t> cookie_of(const config::PortConfig& port);
  // Gives each namespace of cookies (0: none) a service id, keeping those
  // it has; frees the ids of the namespaces gone.
  void assign_services(const std::vector<config::PortConfig>& ports,
                       const std::vector<uint64_t>& cookies);
  // The id the pinned port map gives the namespace of cookie, if any: a
  // daemon adopting the data plane keeps each service's, and with it the
  // connections counted under it.
  std::optional<uint32_t> pinned_service_id(uint64_t cookie) const;
  // The lowest id no service has, once its groups count no connection and
  // no request of an earlier owner (whose sockets may still close).
  std::optional<uint32_t> free_service_id() const;
  // The id the request filter finds port's sockets by, where a port that
  // refuses requests serves a container's namespace; -1 otherwise.
  int32_t refusal_netns_id(const config::PortConfig& port);
  std::vector<int32_t> refusal_ids(const std::vector<config::PortConfig>& ports);
  // The seed walk, here and in each service namespace: a walk sees its opener's.
  Status seed_all(const Interface& iface);
  // work(0) here, then work(inode) on a thread inside each service
  // namespace found (dataplane/in_netns.h): iterators and netlink see their
  // opener's namespace. A namespace's failure (most often: gone since the
  // refresh) is warned, and the others still run.
  Status everywhere(const std::string& what, const std::function<Status(uint32_t)>& work);
  // A namespace's failures recur every second while they last.
  void warn_limited(const std::string& key, const std::string& message);

  std::vector<Interface> interfaces_;
  ServiceNamespaces namespaces_;
  bool ports_pending_ = false;        // the last apply_ports failed
  std::vector<int32_t> refusal_ids_;  // of the ports apply_ports wrote last
  std::chrono::steady_clock::time_point namespace_routes_read_{};
  std::vector<Destination> destinations_written_;
  LogLimiter namespace_errors_{std::chrono::seconds(10)};
  // Opened on first use: only an accept_queue signal needs the iterator.
  std::vector<AcceptQueueReader> queue_readers_;
  struct OwnService {
    uint64_t netns_cookie = 0;
    std::string name;  // the config's name of its namespace
  };
  std::map<uint32_t, OwnService> services_;  // by id, 1..
  using ServicePolicies = std::array<edgeshed_class_policy, EDGESHED_NUM_CLASSES>;
  std::array<ServicePolicies, EDGESHED_MAX_SERVICES> service_policies_{};
};

}  // namespace edgeshed::daemon
