// Typed access to the data plane's maps, from a loaded skeleton or from the
// pins of an attached interface (so status works without the daemon).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "common/fd.h"
#include "common/ip_prefix.h"
#include "common/latency_window.h"
#include "common/result.h"
#include "edgeshed/abi.h"

namespace edgeshed {

class Skeleton;

// A protected port: its class, and the protocols protected on it (TCP, and
// QUIC on the UDP port of the same number), which share the class.
struct PortClass {
  uint16_t port;
  uint32_t class_id;
  uint8_t protocols = EDGESHED_PORT_TCP;      // EDGESHED_PORT_*
  uint8_t requests = EDGESHED_REQUESTS_PASS;  // enum edgeshed_port_requests (TCP)
  uint32_t netns_ino = 0;                     // the service's network namespace; 0: the interface's
  int32_t netns_id = -1;  // its id in the interface's, for the request filter; -1: none
  uint8_t timers = EDGESHED_TIMERS_TRACEPOINTS;  // enum edgeshed_port_timers (TCP)
  // Its service (abi.h): 0, the host's, unless the port number is served in
  // several namespaces, each then a service of its own, found by the
  // namespace's cookie.
  uint8_t service = 0;
  uint64_t netns_cookie = 0;
};

using ClassCounts = std::array<uint64_t, EDGESHED_NUM_CLASSES>;

// The tracker's live counts per class (see abi.h), read together once a tick.
struct LiveCounts {
  ClassCounts inflight{};         // requests in service: what the caps limit
  ClassCounts peak_inflight{};    // the most at once since the last read
  ClassCounts connections{};      // established connections
  ClassCounts inflight_age_ns{};  // the sum of the ages of those in service
  // The queue gate's evidence now (abi.h, es_cohorts), for the classes
  // whose active policy has a gate.
  std::array<bool, EDGESHED_NUM_CLASSES> queued{};
};

class Maps {
 public:
  static Result<Maps> from_skeleton(const Skeleton& skel);
  static Result<Maps> open_pinned(const std::string& pin_dir);

  Result<edgeshed_config> read_config() const;
  Status write_config(const edgeshed_config& cfg) const;

  Result<edgeshed_control> read_control() const;
  // Fills the inactive policy slot, then flips to it and stamps the
  // heartbeat in one write of the control map (see abi.h).
  Status publish(const edgeshed_policy_set& set, uint64_t heartbeat_ns, uint32_t salt) const;
  Result<edgeshed_policy_set> read_active_policy() const;

  // Replaces the whole port table: ports not listed become unprotected. A
  // port listed twice (once per protocol) is protected for both, and must
  // have one class. Each port protected for TCP gets a latency slot: one it already had keeps it
  // (its histograms go on), a new one takes a free slot whose histograms
  // are zeroed. Only the first EDGESHED_MAX_LATENCY_PORTS ports (in the
  // order given, after those keeping theirs) are measured; the rest are
  // protected and counted but have no latency, which read_latency shows by
  // leaving them out (unmeasured_ports() lists them). Connections opened
  // while a port had a slot it has lost since are not measured any more.
  Status set_ports(const std::vector<PortClass>& listed) const;
  Result<std::vector<PortClass>> read_ports() const;
  // Adds or replaces a source-prefix override and keeps the trie sizes in
  // the config map current (the data plane skips empty tries).
  Status set_prefix(const IpPrefix& prefix, uint32_t class_id) const;
  Status remove_prefix(const IpPrefix& prefix) const;
  // Removes every override (for a config reload that sets them anew).
  Status clear_prefixes() const;

  // Per-CPU counters summed over all CPUs.
  Result<edgeshed_stats> read_stats() const;
  // The class readers below read a service's groups (abi.h): service 0's,
  // the host's, unless told.
  // Requests in service (abi.h, es_inflight): what the caps limit.
  Result<ClassCounts> read_inflight_classes(uint32_t service = 0) const;
  Result<uint64_t> read_inflight_port(uint16_t port) const;
  // The most requests in service at once per class since the last call,
  // which restarts the count (a request entering service meanwhile may be
  // missed by the next read; the live count is read with it).
  Result<ClassCounts> take_inflight_peaks(uint32_t service = 0) const;
  // Established connections (es_conns).
  Result<ClassCounts> read_connection_classes(uint32_t service = 0) const;
  Result<uint64_t> read_connection_port(uint16_t port) const;
  // The sum of the ages of the requests in service per class (abi.h,
  // es_inflight_since_cls), for the counts `inflight` read just before.
  Result<ClassCounts> read_inflight_ages(const ClassCounts& inflight, uint32_t service = 0) const;
  // The same for one port's requests in service.
  Result<uint64_t> read_inflight_age_port(uint16_t port) const;
  // Per class, whether its queue gate would shut now (the data plane's
  // test, queue_age.bpf.h, on the cohorts of the active policy's age).
  Result<std::array<bool, EDGESHED_NUM_CLASSES>> read_queue_evidence(uint32_t service = 0) const;
  // All of them per class; takes the peaks (so, once a tick: the daemon's).
  Result<LiveCounts> take_live_counts(uint32_t service = 0) const;
  // The service's sheds per class since the load (abi.h, es_group_sheds).
  Result<ClassCounts> read_group_sheds(uint32_t service) const;

  // Cumulative latency histograms (both measures) of each protected port
  // with a latency slot, summed over CPUs: one small read of the slot
  // owners, then one per-CPU lookup per slot in use.
  Result<std::vector<PortLatency>> read_latency() const;
  // Protected ports that have no latency slot (more than the slots).
  Result<std::vector<uint16_t>> unmeasured_ports() const;

 private:
  Status adjust_prefix_count(IpFamily family, int delta) const;
  using LatencyOwners = std::array<edgeshed_latency_owner, EDGESHED_MAX_LATENCY_PORTS>;
  Result<LatencyOwners> read_latency_owners() const;

  Fd config_, control_, policy_, ports_, src4_, src6_, stats_, inflight_, inflight_cls_,
      inflight_peak_;
  Fd conns_, conns_cls_;
  Fd since_, since_cls_, cohorts_;
  Fd latency_, latency_ports_;
  Fd services_;  // es_services: the services of ports served in several namespaces
  Fd group_sheds_;
};

// CLOCK_MONOTONIC in nanoseconds: the clock of bpf_ktime_get_ns().
uint64_t monotonic_ns();

}  // namespace edgeshed
