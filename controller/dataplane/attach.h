// Attaching the data plane to an interface, adopting an attached one, and
// detaching it without leaving programs, qdiscs or pins behind.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/fd.h"
#include "common/ip_prefix.h"
#include "common/result.h"
#include "dataplane/destinations.h"
#include "dataplane/idle_connections.h"
#include "dataplane/inflight_seed.h"
#include "dataplane/maps.h"
#include "dataplane/request_filter.h"
#include "dataplane/request_timers.h"

namespace edgeshed {

// /sys/fs/bpf/edgeshed/<iface>
std::string pin_dir_for(const std::string& iface);

struct AttachOptions {
  std::string iface;
  uint32_t hook = EDGESHED_HOOK_XDP;
  // Settings written into the config map; on adoption they replace the
  // running ones, except what the data plane itself tracks.
  uint32_t mode = EDGESHED_MODE_OBSERVE;
  uint32_t action = EDGESHED_ACTION_RST;
  uint32_t draw = EDGESHED_DRAW_SOURCE_HASH;
  uint64_t heartbeat_timeout_ns = 1000000000ull;
  uint32_t rst_per_sec_per_cpu = EDGESHED_DEFAULT_RST_PER_SEC_PER_CPU;
  edgeshed_rst_reflect rst_reflect = {
      EDGESHED_DEFAULT_RST_REFLECT_PER_SEC, EDGESHED_DEFAULT_RST_REFLECT_BURST,
      EDGESHED_DEFAULT_RST_REFLECT_PREFIX4, EDGESHED_DEFAULT_RST_REFLECT_PREFIX6,
      EDGESHED_DEFAULT_RST_REFLECT_PER_CONN};
  uint32_t events_per_sec_per_cpu = 100;
  uint32_t event_sample = 1;
  // Leading bits of a source address the source-hash draw covers.
  uint32_t hash_prefix4 = EDGESHED_DEFAULT_HASH_PREFIX4;
  uint32_t hash_prefix6 = EDGESHED_DEFAULT_HASH_PREFIX6;
  // Replaces the port table when set; an adopting attach without ports
  // keeps the running table.
  std::optional<std::vector<PortClass>> ports;
  // Destinations decided besides the host's own (dataplane/destinations.h).
  std::vector<IpPrefix> destinations;
  // The local routes of the services' namespaces (containers'): decided from
  // the first SYN on, so that a daemon adopting the data plane never
  // forgets them while it starts; each with its namespace's cookie.
  std::vector<Destination> service_routes;
};

struct Attached {
  Maps maps;
  InflightSeed seed;             // to run again when the protected ports change
  RequestFilter requests;        // on while a port refuses requests on open connections
  IdleConnections idle;          // the walks that reclaim idle connections
  RequestTimers timers;          // where the ports' requests are timed
  DestinationMaps destinations;  // what is this host's to decide
  bool adopted;                  // an attached data plane of the same ABI was taken over
  std::string xdp_way;           // how the XDP program shares the hook; empty at tc
};

// Loads the programs with the maps pinned under pin_dir_for(iface) and
// attaches them, or atomically replaces the programs of an attached data
// plane of the same ABI (there is never a moment with no program).
Result<Attached> attach(const AttachOptions& opts);

// Removes the programs and filters, the clsact qdisc if edgeshed created it,
// and pins.
Status detach(const std::string& iface);

// How long a lock taker waits for another writer before it takes the
// holder for a daemon.
inline constexpr std::chrono::milliseconds kInterfaceLockWait{2000};

// Takes the interface's lock (a flock on its pin directory, created if
// missing), held while the returned fd lives: one daemon per interface.
Result<Fd> lock_interface(const std::string& iface);
// The same lock for a command that writes the maps of an attached
// interface (policy, config, ports): one writer at a time, and none while
// a daemon runs, so no read-modify-write loses another's fields.
Result<Fd> lock_attached_interface(const std::string& iface);
// Whether a daemon holds the interface's lock.
bool interface_locked(const std::string& iface);

}  // namespace edgeshed
