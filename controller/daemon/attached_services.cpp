// AttachedDataplane: the services of their own (abi.h) of the ports that
// several namespaces serve, each with a law of its own (daemon/service_tick.h).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "daemon/attached_dataplane.h"
#include "dataplane/in_netns.h"

namespace edgeshed::daemon {

namespace {

std::string namespace_name(const config::PortConfig& port) {
  return port.netns ? port.netns->describe() : std::string("the interface's namespace");
}

// The port numbers served in more than one namespace.
std::set<uint16_t> shared_ports(const std::vector<config::PortConfig>& ports) {
  std::map<uint16_t, std::set<std::string>> where;
  for (const auto& p : ports) where[p.port].insert(namespace_name(p));
  std::set<uint16_t> shared;
  for (const auto& [port, names] : where) {
    if (names.size() > 1) shared.insert(port);
  }
  return shared;
}

}  // namespace

std::vector<AttachedDataplane::PortService> AttachedDataplane::port_services(
    const std::vector<config::PortConfig>& ports) {
  const std::set<uint16_t> shared = shared_ports(ports);
  std::vector<uint64_t> cookies(ports.size(), 0);
  for (size_t i = 0; i < ports.size(); ++i) {
    if (!shared.contains(ports[i].port)) continue;
    auto cookie = cookie_of(ports[i]);
    if (!cookie) {
      warn_limited("cookie " + namespace_name(ports[i]), "port " + std::to_string(ports[i].port) +
                                                             " in " + namespace_name(ports[i]) +
                                                             ": " + cookie.error().message);
      continue;
    }
    cookies[i] = *cookie;
  }
  assign_services(ports, cookies);
  std::vector<PortService> out(ports.size());
  for (size_t i = 0; i < ports.size(); ++i) {
    if (!shared.contains(ports[i].port)) continue;
    const auto own = std::find_if(services_.begin(), services_.end(), [&](const auto& s) {
      return cookies[i] && s.second.netns_cookie == cookies[i];
    });
    // A namespace gone (or past the services' number) serves nothing here.
    if (own == services_.end()) {
      out[i].served = false;
    } else {
      out[i].service = static_cast<uint8_t>(own->first);
      out[i].netns_cookie = cookies[i];
    }
  }
  return out;
}

Result<uint64_t> AttachedDataplane::cookie_of(const config::PortConfig& port) {
  if (namespaces_.inode_of(port) == 0) return current_netns_cookie();
  const ServiceNamespace* ns = namespaces_.namespace_of(port);
  if (!ns) return uint64_t{0};
  uint64_t cookie = 0;
  auto s = run_in_netns(ns->file, ns->inode, [&cookie]() -> Status {
    auto own = current_netns_cookie();
    if (!own) return own.error();
    cookie = *own;
    return {};
  });
  if (!s) return s.error();
  return cookie;
}

void AttachedDataplane::assign_services(const std::vector<config::PortConfig>& ports,
                                        const std::vector<uint64_t>& cookies) {
  std::map<uint64_t, std::string> wanted;  // cookie -> its namespace's name
  for (size_t i = 0; i < ports.size(); ++i) {
    if (cookies[i]) wanted.emplace(cookies[i], namespace_name(ports[i]));
  }
  for (auto it = services_.begin(); it != services_.end();) {
    if (wanted.contains(it->second.netns_cookie)) {
      ++it;
      continue;
    }
    spdlog::info("service {} ({}) is gone, its law with it", it->first, it->second.name);
    service_policies_[it->first] = {};
    it = services_.erase(it);
  }
  for (const auto& entry : wanted) {
    const uint64_t cookie = entry.first;
    const std::string& name = entry.second;
    const bool known = std::any_of(services_.begin(), services_.end(), [cookie](const auto& s) {
      return s.second.netns_cookie == cookie;
    });
    if (known) continue;
    auto id = pinned_service_id(cookie);
    if (!id) id = free_service_id();
    if (!id) {
      warn_limited("services", "no service id free for " + name + " (at most " +
                                   std::to_string(EDGESHED_MAX_SERVICES - 1) +
                                   ", each free once its connections closed): not protected");
      continue;
    }
    services_[*id] = {cookie, name};
    spdlog::info("service {}: {}, a port number another namespace serves too: a law of its own",
                 *id, name);
  }
}

std::optional<uint32_t> AttachedDataplane::pinned_service_id(uint64_t cookie) const {
  if (interfaces_.empty()) return std::nullopt;
  auto ports = interfaces_.front().maps.read_ports();
  if (!ports) return std::nullopt;
  for (const PortClass& p : *ports) {
    if (p.netns_cookie == cookie && p.service && !services_.contains(p.service)) return p.service;
  }
  return std::nullopt;
}

std::optional<uint32_t> AttachedDataplane::free_service_id() const {
  for (uint32_t id = 1; id < EDGESHED_MAX_SERVICES; ++id) {
    if (services_.contains(id)) continue;
    const bool quiet = std::all_of(interfaces_.begin(), interfaces_.end(), [id](const auto& iface) {
      auto inflight = iface.maps.read_inflight_classes(id);
      auto connections = iface.maps.read_connection_classes(id);
      if (!inflight || !connections) return false;
      for (size_t c = 0; c < EDGESHED_NUM_CLASSES; ++c) {
        if ((*inflight)[c] || (*connections)[c]) return false;
      }
      return true;
    });
    if (quiet) return id;
  }
  return std::nullopt;
}

std::vector<uint32_t> AttachedDataplane::services() const {
  std::vector<uint32_t> ids;
  for (const auto& entry : services_) ids.push_back(entry.first);
  return ids;
}

std::string AttachedDataplane::service_name(uint32_t service) const {
  const auto it = services_.find(service);
  return it == services_.end() ? std::string() : it->second.name;
}

Result<LiveCounts> AttachedDataplane::take_service_counts(size_t i, uint32_t service) const {
  return interfaces_[i].maps.take_live_counts(service);
}

namespace {
std::vector<PortLatency> of_service(std::vector<PortLatency> all, uint32_t service) {
  std::erase_if(all, [service](const PortLatency& p) { return p.service != service; });
  return all;
}
}  // namespace

Result<std::vector<PortLatency>> AttachedDataplane::read_service_latency(size_t i,
                                                                         uint32_t service) const {
  auto all = interfaces_[i].maps.read_latency();
  if (!all) return all.error();
  return of_service(std::move(*all), service);
}

void AttachedDataplane::set_service_policies(uint32_t service, const edgeshed_policy_set& set) {
  if (service == 0 || service >= EDGESHED_MAX_SERVICES || !services_.contains(service)) return;
  std::copy_n(std::begin(set.cls), EDGESHED_NUM_CLASSES, service_policies_[service].begin());
}

}  // namespace edgeshed::daemon
