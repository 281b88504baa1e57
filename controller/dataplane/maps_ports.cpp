// Maps: the port table (es_ports, and es_services for a port served in
// several namespaces) and the latency slots its ports own.
#include <bpf/bpf.h>

#include <algorithm>
#include <array>
#include <map>
#include <span>
#include <vector>

#include "dataplane/errno_message.h"
#include "dataplane/map_io.h"
#include "dataplane/maps.h"

namespace edgeshed {

using map_io::lookup;
using map_io::lookup_batch;
using map_io::update;

namespace {

// The port map's entry of p (and, for a port of several namespaces, its
// service's entry in es_services).
edgeshed_port port_entry(const PortClass& p, uint8_t latency_slot) {
  edgeshed_port e{};
  e.protocols = p.protocols;
  e.class_id = static_cast<__u8>(p.class_id);
  e.latency_slot = latency_slot;
  e.requests = p.requests;
  e.netns_ino = p.netns_ino;
  e.netns_id = p.netns_id;
  e.timers = p.timers;
  e.service = p.service;
  return e;
}

}  // namespace

Status Maps::set_ports(const std::vector<PortClass>& listed) const {
  // One entry per port and service, its protocols merged; only TCP ports
  // are measured.
  std::vector<PortClass> ports;
  for (const auto& p : listed) {
    if (p.class_id >= EDGESHED_NUM_CLASSES || p.requests >= EDGESHED_NUM_PORT_REQUESTS ||
        p.timers >= EDGESHED_NUM_PORT_TIMERS || p.service >= EDGESHED_MAX_SERVICES) {
      return make_error("port " + std::to_string(p.port) +
                        ": class id, keepalive, timers or service out of range");
    }
    auto same = std::find_if(ports.begin(), ports.end(), [&](const PortClass& q) {
      return q.port == p.port && q.service == p.service;
    });
    if (same == ports.end()) {
      ports.push_back(p);
    } else if (same->class_id != p.class_id) {
      const bool listed_twice = (same->protocols & p.protocols) != 0;  // for one protocol
      return make_error("port " + std::to_string(p.port) +
                        (listed_twice ? ": listed twice with different classes"
                                      : ": its protocols must share one class"));
    } else if (same->netns_ino != p.netns_ino && same->netns_ino && p.netns_ino) {
      return make_error("port " + std::to_string(p.port) +
                        ": its protocols must serve one network namespace");
    } else {
      same->protocols |= p.protocols;
      same->requests = std::max(same->requests, p.requests);
      same->netns_ino = std::max(same->netns_ino, p.netns_ino);
      same->netns_id = std::max(same->netns_id, p.netns_id);
      same->timers = std::max(same->timers, p.timers);
      same->netns_cookie = std::max(same->netns_cookie, p.netns_cookie);
    }
  }
  std::erase_if(ports, [](const PortClass& p) { return p.protocols == 0; });
  auto owners = read_latency_owners();
  if (!owners) return owners.error();
  // Slots of ports that stay protected stay theirs; the others are freed.
  const auto slot_key = [](const PortClass& p) { return std::pair(p.port, p.service); };
  std::map<std::pair<uint16_t, uint8_t>, uint8_t> slot_of;
  LatencyOwners next{};
  for (uint32_t s = 0; s < EDGESHED_MAX_LATENCY_PORTS; ++s) {
    const auto& o = (*owners)[s];
    if (!o.in_use) continue;
    for (const auto& p : ports) {
      if (p.port == o.port && p.service == o.service && (p.protocols & EDGESHED_PORT_TCP)) {
        slot_of[slot_key(p)] = static_cast<uint8_t>(s);
        next[s] = o;
        break;
      }
    }
  }
  // New ports take free slots.
  std::vector<uint32_t> fresh_slots;
  uint32_t free_slot = 0;
  for (const auto& p : ports) {
    if (slot_of.contains(slot_key(p)) || !(p.protocols & EDGESHED_PORT_TCP)) continue;
    while (free_slot < EDGESHED_MAX_LATENCY_PORTS && next[free_slot].in_use) ++free_slot;
    if (free_slot == EDGESHED_MAX_LATENCY_PORTS) break;
    next[free_slot] = {p.port, 1, p.service};
    slot_of[slot_key(p)] = static_cast<uint8_t>(free_slot);
    fresh_slots.push_back(free_slot);
  }
  // The owners first: from then on the data plane drops the samples of the
  // connections of a port that lost its slot. Then the new ports' slots are
  // zeroed, and only then does the port table hand them out.
  std::array<uint32_t, EDGESHED_MAX_LATENCY_PORTS> slots{};
  for (uint32_t s = 0; s < EDGESHED_MAX_LATENCY_PORTS; ++s) slots[s] = s;
  __u32 n = EDGESHED_MAX_LATENCY_PORTS;
  bpf_map_batch_opts batch{};
  batch.sz = sizeof(batch);
  batch.elem_flags = BPF_ANY;
  if (bpf_map_update_batch(latency_ports_.get(), slots.data(), next.data(), &n, &batch)) {
    return make_error("cannot write latency slot map: " + errno_text(errno));
  }
  const auto cpus = map_io::possible_cpus();
  if (!cpus) return cpus.error();
  const std::vector<edgeshed_latency_slot> zero(*cpus);
  for (uint32_t slot : fresh_slots) {
    if (auto s = update(latency_, &slot, zero.data(), "latency map"); !s) return s;
  }
  const auto latency_slot = [&](const PortClass& p) {
    const auto it = slot_of.find(slot_key(p));
    return it == slot_of.end() ? uint8_t{EDGESHED_LATENCY_NO_SLOT} : it->second;
  };

  std::vector<uint32_t> keys(EDGESHED_NUM_PORTS);
  std::vector<edgeshed_port> values(EDGESHED_NUM_PORTS);
  for (uint32_t i = 0; i < EDGESHED_NUM_PORTS; ++i) {
    keys[i] = i;
    values[i].latency_slot = EDGESHED_LATENCY_NO_SLOT;
    values[i].netns_id = -1;
  }
  // A port of several services: what they share in the port map, each
  // one's entry in es_services, where its namespace is found (a cookie).
  std::map<std::pair<uint64_t, uint32_t>, edgeshed_port> services;
  for (const auto& p : ports) {
    edgeshed_port& v = values[p.port];
    if (p.service == 0) {
      v = port_entry(p, latency_slot(p));
      continue;
    }
    v.protocols |= p.protocols;
    v.class_id = static_cast<__u8>(p.class_id);
    v.requests = std::max(v.requests, p.requests);
    v.timers = std::max(v.timers, p.timers);
    v.service = EDGESHED_SERVICE_BY_NETNS;
    if (p.netns_cookie) services[{p.netns_cookie, p.port}] = port_entry(p, latency_slot(p));
  }
  // Services before the port map that sends connections to them; the ones
  // gone after it.
  for (const auto& [where, entry] : services) {
    edgeshed_service_key key{};
    key.netns_cookie = where.first;
    key.port = where.second;
    if (auto s = update(services_, &key, &entry, "service map"); !s) return s;
  }
  // One syscall for the whole table: the data plane sees either the old or
  // the new entry of each port, never a half-written one.
  __u32 count = EDGESHED_NUM_PORTS;
  bpf_map_batch_opts opts{};
  opts.sz = sizeof(opts);
  opts.elem_flags = BPF_ANY;
  if (bpf_map_update_batch(ports_.get(), keys.data(), values.data(), &count, &opts)) {
    return make_error("cannot write port map: " + errno_text(errno));
  }
  std::vector<edgeshed_service_key> stale;
  edgeshed_service_key key{};
  const edgeshed_service_key* prev = nullptr;
  while (bpf_map_get_next_key(services_.get(), prev, &key) == 0) {
    if (!services.contains({key.netns_cookie, key.port})) stale.push_back(key);
    prev = &key;
  }
  for (const auto& k : stale) bpf_map_delete_elem(services_.get(), &k);
  return {};
}

Result<std::vector<PortClass>> Maps::read_ports() const {
  std::vector<uint32_t> keys(EDGESHED_NUM_PORTS);
  std::vector<edgeshed_port> values(EDGESHED_NUM_PORTS);
  auto count =
      lookup_batch(ports_, std::span<uint32_t>(keys), std::span<edgeshed_port>(values), "port map");
  if (!count) return count.error();
  const auto port_class = [](uint32_t port, const edgeshed_port& e, uint64_t cookie) {
    return PortClass{static_cast<uint16_t>(port),
                     e.class_id,
                     e.protocols,
                     e.requests,
                     e.netns_ino,
                     e.netns_id,
                     e.timers,
                     e.service,
                     cookie};
  };
  std::vector<PortClass> out;
  bool by_netns = false;
  for (__u32 i = 0; i < *count; ++i) {
    if (!values[i].protocols) continue;
    if (values[i].service == EDGESHED_SERVICE_BY_NETNS) {
      by_netns = true;
    } else {
      out.push_back(port_class(keys[i], values[i], 0));
    }
  }
  if (!by_netns) return out;
  // A port of several namespaces: each service, as set_ports() takes it.
  edgeshed_service_key key{};
  const edgeshed_service_key* prev = nullptr;
  while (bpf_map_get_next_key(services_.get(), prev, &key) == 0) {
    edgeshed_port entry{};
    if (auto s = lookup(services_, &key, &entry, "service map"); !s) return s.error();
    if (key.port < EDGESHED_NUM_PORTS && values[key.port].service == EDGESHED_SERVICE_BY_NETNS) {
      out.push_back(port_class(key.port, entry, key.netns_cookie));
    }
    prev = &key;
  }
  return out;
}

}  // namespace edgeshed
