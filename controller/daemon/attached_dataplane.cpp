#include "daemon/attached_dataplane.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "common/names.h"
#include "config/signal_table.h"
#include "dataplane/attach.h"
#include "dataplane/hook_choice.h"
#include "dataplane/in_netns.h"
#include "dataplane/local_routes.h"
#include "dataplane/netns_id.h"

namespace edgeshed::daemon {

Status AttachedDataplane::attach_all(const config::Config& cfg, const config::Config& effective) {
  namespaces_.refresh(effective.ports);
  const std::vector<Destination> service_routes = namespace_routes();
  for (const auto& iface : cfg.interfaces) {
    AttachOptions opts;
    opts.iface = iface.name;
    const auto hook =
        choose_hook(iface.name, iface.hook_named ? std::optional(static_cast<uint32_t>(iface.hook))
                                                 : std::nullopt);
    opts.hook = hook.hook;
    if (hook.warning) {
      spdlog::warn("{}", hook.note);
    } else if (!hook.note.empty()) {
      spdlog::info("{}", hook.note);
    }
    opts.mode = static_cast<uint32_t>(cfg.dataplane.mode);
    opts.action = static_cast<uint32_t>(effective.dataplane.action);
    opts.draw = static_cast<uint32_t>(cfg.dataplane.draw);
    opts.heartbeat_timeout_ns = static_cast<uint64_t>(cfg.daemon.heartbeat_timeout.count());
    opts.rst_per_sec_per_cpu = cfg.dataplane.rst_per_sec_per_cpu;
    opts.rst_reflect = cfg.dataplane.rst_reflect.to_abi();
    opts.events_per_sec_per_cpu = cfg.dataplane.events_per_sec_per_cpu;
    opts.event_sample = cfg.dataplane.event_sample;
    opts.hash_prefix4 = cfg.dataplane.hash_prefix_v4;
    opts.hash_prefix6 = cfg.dataplane.hash_prefix_v6;
    opts.destinations = cfg.dataplane.destinations;
    opts.service_routes = service_routes;
    auto attached = attach(opts);
    if (!attached) {
      detach_fresh();
      return make_error(iface.name + ": " + attached.error().message);
    }
    spdlog::info("{} {} at {}", attached->adopted ? "adopted the data plane on" : "attached to",
                 iface.name, names::name_of(names::kHooks, opts.hook));
    if (!attached->xdp_way.empty()) spdlog::info("{}: {}", iface.name, attached->xdp_way);
    interfaces_.push_back({iface.name, std::move(attached->maps), std::move(attached->seed),
                           std::move(attached->requests), std::move(attached->idle),
                           std::move(attached->timers), std::move(attached->destinations),
                           attached->adopted});
  }
  if (auto s = apply_settings(effective); !s) {
    detach_fresh();
    return s;
  }
  return {};
}

void AttachedDataplane::detach_fresh() {
  for (const auto& iface : interfaces_) {
    if (iface.adopted) continue;
    if (auto s = detach(iface.name); !s) spdlog::error("{}", s.error().message);
  }
  interfaces_.clear();
  queue_readers_.clear();
}

Status AttachedDataplane::apply_settings(const config::Config& cfg) {
  namespaces_.refresh(cfg.ports);
  if (auto s = apply_ports(cfg.ports); !s) return s;
  for (auto& iface : interfaces_) {
    auto& maps = iface.maps;
    // Prefixes are cleared then set: for a moment a source may fall back to
    // its port's class. Reloads and operator changes are rare (a namespace
    // that comes or goes sets the ports only); a torn trie never happens.
    if (auto s = maps.clear_prefixes(); !s) return s;
    for (const auto& p : cfg.prefixes) {
      if (auto s = maps.set_prefix(p.prefix, static_cast<uint32_t>(p.traffic_class)); !s) return s;
    }
    // A probe must measure the service, not be shed by it: its source is
    // critical (a probe without `source` uses the host's own address, which
    // reaches a local service over loopback, past the shedder).
    for (const auto& sig : cfg.signals) {
      if (sig.kind != "probe") continue;
      auto source = config::signal_keys(sig)["source"].value<std::string>();
      if (!source) continue;
      bool v6 = source->find(':') != std::string::npos;
      auto prefix = parse_ip_prefix(*source + (v6 ? "/128" : "/32"));
      if (!prefix) return make_error(sig.locate("source") + ": " + prefix.error().message);
      if (auto s = maps.set_prefix(*prefix, EDGESHED_CLASS_CRITICAL); !s) return s;
    }
    auto dp = maps.read_config();
    if (!dp) return dp.error();
    dp->action = static_cast<uint32_t>(cfg.dataplane.action);
    dp->draw = static_cast<uint32_t>(cfg.dataplane.draw);
    dp->rst_per_sec_per_cpu = cfg.dataplane.rst_per_sec_per_cpu;
    dp->rst_reflect = cfg.dataplane.rst_reflect.to_abi();
    dp->events_per_sec_per_cpu = cfg.dataplane.events_per_sec_per_cpu;
    dp->event_sample = cfg.dataplane.event_sample;
    dp->hash_prefix4 = static_cast<uint8_t>(cfg.dataplane.hash_prefix_v4);
    dp->hash_prefix6 = static_cast<uint8_t>(cfg.dataplane.hash_prefix_v6);
    dp->heartbeat_timeout_ns = static_cast<uint64_t>(cfg.daemon.heartbeat_timeout.count());
    if (auto s = maps.write_config(*dp); !s) return s;
  }
  return refresh_destinations(cfg.dataplane.destinations);
}

Status AttachedDataplane::apply_ports(const std::vector<config::PortConfig>& cfg_ports) {
  std::vector<PortClass> ports;
  ports.reserve(cfg_ports.size());
  refusal_ids_ = refusal_ids(cfg_ports);
  const std::vector<PortService> services = port_services(cfg_ports);
  for (size_t i = 0; i < cfg_ports.size(); ++i) {
    const auto& p = cfg_ports[i];
    PortClass port{p.port,
                   static_cast<uint32_t>(p.traffic_class),
                   static_cast<uint8_t>(1u << static_cast<uint32_t>(p.protocol)),
                   static_cast<uint8_t>(p.keepalive),
                   namespaces_.inode_of(p),
                   refusal_ids_[i]};
    if (!services[i].served) port.protocols = 0;
    port.service = services[i].service;
    port.netns_cookie = services[i].netns_cookie;
    ports.push_back(port);
  }
  const bool refuse_requests = std::any_of(cfg_ports.begin(), cfg_ports.end(), [](const auto& p) {
    return p.keepalive == EDGESHED_REQUESTS_REFUSE;
  });
  const bool reclaim = std::any_of(cfg_ports.begin(), cfg_ports.end(), [](const auto& p) {
    return p.keepalive != EDGESHED_REQUESTS_PASS;
  });
  ports_pending_ = true;  // until every interface has them: the next tick tries again
  for (auto& iface : interfaces_) {
    if (reclaim && !iface.idle.supported()) {
      return make_error(iface.name +
                        ": keepalive = \"reclaim\" and \"refuse\" need bpf_sock_destroy() "
                        "(Linux 6.5) and the kernel's request accounting (6.11)");
    }
    auto timers = link_timers(iface, cfg_ports);
    if (!timers) return make_error(iface.name + ": " + timers.error().message);
    for (size_t i = 0; i < ports.size(); ++i) ports[i].timers = (*timers)[i];
    if (auto s = iface.maps.set_ports(ports); !s) return s;
    if (auto s = unlink_unused_timers(iface, cfg_ports, *timers); !s) return s;
    if (auto s = iface.requests.set(refuse_requests, iface.maps); !s) return s;
    // A port protected from now on has connections the tracker never saw open.
    if (auto s = seed_all(iface); !s) return s;
  }
  ports_pending_ = false;
  return {};
}

namespace {

// Whether a protected TCP port is timed at the tracepoints.
bool tracepoints_needed(const std::vector<config::PortConfig>& ports,
                        const std::vector<uint8_t>& timers) {
  for (size_t i = 0; i < ports.size(); ++i) {
    if (ports[i].protocol == config::Protocol::kTcp && timers[i] == EDGESHED_TIMERS_TRACEPOINTS) {
      return true;
    }
  }
  return false;
}

}  // namespace

const std::string* AttachedDataplane::timing_cgroup(const config::PortConfig& port) const {
  if (port.protocol != config::Protocol::kTcp || !port.netns) return nullptr;
  if (port.netns->kind == config::NetnsRef::Kind::kCgroup) return &port.netns->path;
  return namespaces_.listener_cgroup(port);
}

Result<std::vector<uint8_t>> AttachedDataplane::link_timers(
    Interface& iface, const std::vector<config::PortConfig>& ports) {
  std::vector<uint8_t> timers(ports.size(), EDGESHED_TIMERS_TRACEPOINTS);
  if (!iface.timers.supported()) return timers;
  for (size_t i = 0; i < ports.size(); ++i) {
    const std::string* cgroup = timing_cgroup(ports[i]);
    if (!cgroup) continue;
    // A cgroup gone took its service along: nothing to time until it is
    // back (followed as its namespace is), and no tracepoint for it.
    auto linked = iface.timers.link_cgroup(*cgroup);
    if (!linked) {
      warn_limited("timers " + *cgroup,
                   iface.name + ": port " + std::to_string(ports[i].port) +
                       ": requests timed at the tracepoints instead: " + linked.error().message);
      continue;
    }
    timers[i] = EDGESHED_TIMERS_CGROUP;
  }
  if (tracepoints_needed(ports, timers) && !iface.timers.tracepoints_linked()) {
    // The port map must not name timers that are not there: the ports
    // are written again at the next tick (ports_pending_).
    if (auto s = iface.timers.link_tracepoints(); !s) return s.error();
    spdlog::info(
        "{}: request timers linked to the tracepoints (sk_data_ready, "
        "tcp_sendmsg_locked): a protected TCP port is not timed at a cgroup",
        iface.name);
  }
  return timers;
}

bool AttachedDataplane::cgroups_to_relink(const std::vector<config::PortConfig>& ports) const {
  return std::any_of(interfaces_.begin(), interfaces_.end(), [&](const Interface& iface) {
    return iface.timers.supported() &&
           std::any_of(ports.begin(), ports.end(), [&](const config::PortConfig& p) {
             const std::string* cgroup = timing_cgroup(p);
             return cgroup && iface.timers.relink_needed(*cgroup);
           });
  });
}

Status AttachedDataplane::unlink_unused_timers(Interface& iface,
                                               const std::vector<config::PortConfig>& ports,
                                               const std::vector<uint8_t>& timers) {
  if (!iface.timers.supported()) return {};
  std::set<std::string> cgroups;
  for (size_t i = 0; i < ports.size(); ++i) {
    if (timers[i] == EDGESHED_TIMERS_CGROUP) cgroups.insert(*timing_cgroup(ports[i]));
  }
  if (auto s = iface.timers.unlink_cgroups_but(cgroups); !s) return s;
  if (tracepoints_needed(ports, timers) || !iface.timers.tracepoints_linked()) return {};
  iface.timers.unlink_tracepoints();
  spdlog::info(
      "{}: request timers unlinked from the tracepoints: every protected TCP port is "
      "timed at its cgroup, so the host's other sockets pay nothing for a send or a "
      "receive",
      iface.name);
  return {};
}

std::vector<int32_t> AttachedDataplane::refusal_ids(const std::vector<config::PortConfig>& ports) {
  std::vector<int32_t> ids;
  ids.reserve(ports.size());
  for (const auto& p : ports) ids.push_back(refusal_netns_id(p));
  return ids;
}

int32_t AttachedDataplane::refusal_netns_id(const config::PortConfig& port) {
  const ServiceNamespace* ns = namespaces_.namespace_of(port);
  if (!ns || port.keepalive != EDGESHED_REQUESTS_REFUSE) return -1;
  auto id = netns_id_of(ns->file, ns->inode);
  if (!id) {
    warn_limited("id " + ns->file, "port " + std::to_string(port.port) +
                                       ": no request refused in " + ns->file + ": " +
                                       id.error().message);
    return -1;
  }
  return *id;
}

Status AttachedDataplane::seed_all(const Interface& iface) {
  return everywhere(iface.name + ": the seed walk",
                    [&iface](uint32_t) { return iface.seed.run(); });
}

void AttachedDataplane::warn_limited(const std::string& key, const std::string& message) {
  namespace_errors_.error(key, message, std::chrono::steady_clock::now().time_since_epoch());
}

std::vector<Destination> AttachedDataplane::namespace_routes() {
  namespace_routes_read_ = std::chrono::steady_clock::now();
  std::vector<Destination> all;
  for (const auto& ns : namespaces_.present()) {
    std::vector<IpPrefix> routes;
    uint64_t cookie = 0;
    auto s = run_in_netns(ns.file, ns.inode, [&routes, &cookie]() -> Status {
      auto local = read_local_routes();
      if (!local) return local.error();
      auto own = current_netns_cookie();
      if (!own) return own.error();
      routes = std::move(*local);
      cookie = *own;
      return {};
    });
    if (!s) {
      warn_limited("routes " + ns.file,
                   "the routes of a service's namespace not followed: " + s.error().message);
      continue;
    }
    for (const auto& r : routes) all.push_back({r, EDGESHED_DST_LOCAL, cookie});
  }
  return all;
}

Status AttachedDataplane::refresh_destinations(const std::vector<IpPrefix>& configured) {
  auto wanted = host_destinations(configured);
  if (!wanted) return wanted.error();
  add_local_destinations(*wanted, namespace_routes());
  // Read once a second while a service is in a namespace: written on change.
  if (*wanted == destinations_written_) return {};
  for (const auto& iface : interfaces_) {
    if (auto s = apply_destinations(iface.maps, iface.destinations, *wanted); !s) {
      destinations_written_.clear();
      return make_error(iface.name + ": " + s.error().message);
    }
  }
  destinations_written_ = std::move(*wanted);
  return {};
}

Status AttachedDataplane::follow_namespaces(const config::Config& cfg) {
  constexpr auto kAddressesEvery = std::chrono::seconds(1);
  // A cgroup made anew under its name (a systemd service restarted) is
  // linked again, as a namespace that came or went.
  if (namespaces_.refresh(cfg.ports) || ports_pending_ || cgroups_to_relink(cfg.ports)) {
    if (auto s = apply_ports(cfg.ports); !s) return s;
    return refresh_destinations(cfg.dataplane.destinations);
  }
  if (namespaces_.present().empty() ||
      std::chrono::steady_clock::now() - namespace_routes_read_ < kAddressesEvery) {
    return {};
  }
  // A namespace's id may come late (none could be had) or anew (a pod
  // replaced under the same inode number): checked with its addresses.
  if (refusal_ids(cfg.ports) != refusal_ids_) {
    if (auto s = apply_ports(cfg.ports); !s) return s;
  }
  return refresh_destinations(cfg.dataplane.destinations);
}

void AttachedDataplane::detach_all() {
  for (const auto& iface : interfaces_) {
    if (auto s = detach(iface.name); !s) {
      spdlog::error("{}", s.error().message);
    } else {
      spdlog::info("detached from {}", iface.name);
    }
  }
}

Result<LiveCounts> AttachedDataplane::take_live_counts(size_t i) const {
  return interfaces_[i].maps.take_live_counts();
}

Result<edgeshed_stats> AttachedDataplane::read_stats(size_t i) const {
  return interfaces_[i].maps.read_stats();
}

Result<std::vector<PortLatency>> AttachedDataplane::read_latency(size_t i) const {
  return read_service_latency(i, 0);
}

Result<edgeshed_config> AttachedDataplane::read_config(size_t i) const {
  return interfaces_[i].maps.read_config();
}

Status AttachedDataplane::write_config(size_t i, const edgeshed_config& cfg) const {
  return interfaces_[i].maps.write_config(cfg);
}

Status AttachedDataplane::publish(size_t i, const edgeshed_policy_set& set, uint64_t heartbeat_ns,
                                  uint32_t salt) const {
  edgeshed_policy_set all = set;
  for (const auto& entry : services_) {
    for (uint32_t c = 0; c < EDGESHED_NUM_CLASSES; ++c) {
      all.cls[edgeshed_group(entry.first, c)] = service_policies_[entry.first][c];
    }
  }
  return interfaces_[i].maps.publish(all, heartbeat_ns, salt);
}

Status AttachedDataplane::everywhere(const std::string& what,
                                     const std::function<Status(uint32_t)>& work) {
  if (auto s = work(0); !s) return s;
  for (const auto& ns : namespaces_.present()) {
    // A namespace gone since the refresh is the next tick's news.
    if (auto s = run_in_netns(ns.file, ns.inode, [&] { return work(ns.inode); }); !s) {
      warn_limited(what + " " + ns.file, what + " in " + ns.file + ": " + s.error().message);
    }
  }
  return {};
}

Result<signals::QueueSnapshot> AttachedDataplane::read_accept_queues() {
  if (queue_readers_.empty()) {
    for (const auto& iface : interfaces_) {
      auto reader = AcceptQueueReader::open_pinned(pin_dir_for(iface.name));
      if (!reader) return reader.error();
      queue_readers_.push_back(std::move(*reader));
    }
  }
  // Each interface has its own protected ports; a port on several sees
  // the same sockets, so the worst reading of a port stands.
  signals::QueueSnapshot merged;
  for (auto& reader : queue_readers_) {
    auto s = everywhere("the accept queues", [&](uint32_t ns) -> Status {
      auto snap = reader.read(ns);
      if (!snap) return snap.error();
      for (const auto& [port, q] : *snap) {
        auto& m = merged[port];
        m.depth = std::max(m.depth, q.depth);
        m.max_depth = std::max(m.max_depth, q.max_depth);
        m.waiting = std::max(m.waiting, q.waiting);
        m.oldest_ns = std::max(m.oldest_ns, q.oldest_ns);
      }
      return {};
    });
    if (!s) return s.error();
  }
  return merged;
}

Result<std::vector<IdleConnection>> AttachedDataplane::idle_connections(size_t i) {
  return interfaces_[i].idle.list([this](const IdleConnections::Walk& walk) {
    return everywhere("the idle walk", [&walk](uint32_t) { return walk(); });
  });
}

Status AttachedDataplane::reclaim(size_t i, const std::vector<uint64_t>& cookies) {
  return interfaces_[i].idle.reclaim(cookies, [this](const IdleConnections::Walk& walk) {
    return everywhere("the reclaim walk", [&walk](uint32_t) { return walk(); });
  });
}

}  // namespace edgeshed::daemon
