#include "cli/interface_reading.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <numeric>

#include "common/names.h"
#include "dataplane/attach.h"

namespace edgeshed {
namespace {

constexpr uint64_t kNsPerMs = 1000000;

std::vector<PortStatus> port_statuses(const std::vector<PortClass>& ports) {
  std::vector<PortStatus> out;
  for (const auto& p : ports) {
    PortStatus s;
    s.port = p.port;
    s.traffic_class = names::name_of(names::kClasses, p.class_id);
    for (uint32_t proto = 0; proto < EDGESHED_NUM_PROTOCOLS; ++proto) {
      if (p.protocols & (1u << proto)) s.protocols.emplace_back(names::kProtocols[proto]);
    }
    s.keepalive = p.requests < names::kKeepAlive.size() ? names::kKeepAlive[p.requests]
                                                        : std::string_view("unknown");
    if (p.netns_ino == EDGESHED_NETNS_NONE) {
      s.netns = "gone";
    } else if (p.netns_ino) {
      s.netns = "net:[" + std::to_string(p.netns_ino) + "]";
    }
    if (p.timers == EDGESHED_TIMERS_CGROUP) s.timers = "cgroup";
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

std::vector<std::string> attached_interfaces() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(EDGESHED_PIN_ROOT, ec)) {
    if (e.path().filename() == EDGESHED_HOST_PIN_DIR) continue;  // the host's limits
    out.push_back(e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

Result<InterfaceReading> read_interface(const std::string& iface) {
  auto maps = Maps::open_pinned(pin_dir_for(iface));
  if (!maps) return maps.error();
  auto cfg = maps->read_config();
  if (!cfg) return cfg.error();
  auto ctl = maps->read_control();
  if (!ctl) return ctl.error();
  const uint64_t now = monotonic_ns();  // next to the heartbeat it is compared with
  auto set = maps->read_active_policy();
  if (!set) return set.error();
  auto stats = maps->read_stats();
  if (!stats) return stats.error();
  auto inflight = maps->read_inflight_classes();
  if (!inflight) return inflight.error();
  auto connections = maps->read_connection_classes();
  if (!connections) return connections.error();
  auto ports = maps->read_ports();
  if (!ports) return ports.error();

  InterfaceReading r;
  r.stats = *stats;
  r.at_ns = now;
  InterfaceStatus& s = r.status;
  s.iface = iface;
  s.abi_version = cfg->abi_version;
  s.hook = names::name_of(names::kHooks, cfg->hook);
  s.mode = names::name_of(names::kModes, cfg->mode);
  s.action = names::name_of(names::kActions, cfg->action);
  s.draw = names::name_of(names::kDraws, cfg->draw);
  s.heartbeat_timeout_ms = cfg->heartbeat_timeout_ns / kNsPerMs;
  const bool never = ctl->heartbeat_ns == 0;
  const uint64_t age = never || now < ctl->heartbeat_ns ? 0 : now - ctl->heartbeat_ns;
  if (!never) s.heartbeat_age_ms = age / kNsPerMs;
  s.fail_open = cfg->heartbeat_timeout_ns != 0 && (never || age > cfg->heartbeat_timeout_ns);
  if (s.fail_open) {
    s.fail_open_reason = never ? "no controller has ever published a heartbeat"
                               : fmt::format("no controller heartbeat for {} ms (timeout {} ms)",
                                             age / kNsPerMs, cfg->heartbeat_timeout_ns / kNsPerMs);
  }
  s.events_per_sec_per_cpu = cfg->events_per_sec_per_cpu;
  s.rst_per_sec_per_cpu = cfg->rst_per_sec_per_cpu;
  const auto& reflect = cfg->rst_reflect;
  s.rst_reflect = {reflect.per_sec, std::max<uint32_t>(reflect.burst, 1),
                   reflect.prefix4 ? reflect.prefix4
                                   : static_cast<uint32_t>(EDGESHED_DEFAULT_RST_REFLECT_PREFIX4),
                   reflect.prefix6 ? reflect.prefix6
                                   : static_cast<uint32_t>(EDGESHED_DEFAULT_RST_REFLECT_PREFIX6),
                   reflect.per_conn};
  s.hash_prefix_v4 = cfg->hash_prefix4 ? cfg->hash_prefix4 : EDGESHED_DEFAULT_HASH_PREFIX4;
  s.hash_prefix_v6 = cfg->hash_prefix6 ? cfg->hash_prefix6 : EDGESHED_DEFAULT_HASH_PREFIX6;
  s.level = set->level;
  s.policy_generation = set->generation;
  s.ports = port_statuses(*ports);
  for (size_t i = 0; i < ports->size(); ++i) {
    const PortClass& p = (*ports)[i];
    if (p.service == 0) continue;
    auto in_service = maps->read_inflight_classes(p.service);
    if (!in_service) return in_service.error();
    PortStatus& port = s.ports[i];
    port.service = p.service;
    port.service_inflight = std::accumulate(in_service->begin(), in_service->end(), uint64_t{0});
    port.service_cap = set->cls[edgeshed_group(p.service, p.class_id)].inflight_cap;
  }
  for (const auto& p : *ports) s.quic.protected_ports |= (p.protocols & EDGESHED_PORT_QUIC) != 0;
  for (uint32_t c = 0; c < EDGESHED_NUM_CLASSES; ++c) {
    const auto& pol = set->cls[c];
    ClassStatus& k = s.classes[c];
    k.shed_fraction = static_cast<double>(pol.shed_frac) / EDGESHED_FRAC_ONE;
    k.inflight_cap = pol.inflight_cap;
    k.tokens_per_sec = pol.tokens_per_sec;
    k.burst = pol.burst;
    k.inflight = (*inflight)[c];
    k.connections = (*connections)[c];
    k.connection_cap = pol.conn_cap;
    std::copy(std::begin(stats->cls[c]), std::end(stats->cls[c]), k.counters.values);
    std::copy(std::begin(stats->quic_cls[c]), std::end(stats->quic_cls[c]),
              s.quic.classes[c].values);
  }
  std::copy(std::begin(stats->global), std::end(stats->global), s.counters.begin());
  return r;
}

InterfaceReading unreadable_interface(const std::string& iface, const std::string& error) {
  InterfaceReading r;
  r.status.iface = iface;
  r.status.error = error;
  return r;
}

}  // namespace edgeshed
