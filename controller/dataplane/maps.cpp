#include "dataplane/maps.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <ctime>
#include <limits>
#include <map>
#include <span>

#include "common/stats.h"
#include "dataplane/errno_message.h"
#include "dataplane/map_fd.h"
#include "dataplane/map_io.h"
#include "dataplane/skeleton.h"
#include "edgeshed.skel.h"

namespace edgeshed {

using map_io::lookup;
using map_io::lookup_all;
using map_io::lookup_batch;
using map_io::update;

namespace {

constexpr uint32_t kZero = 0;
constexpr uint64_t kNsPerSec = 1'000'000'000;

// The GCRA's interval and tolerance of a class's rate, as the data plane
// computed them per SYN before: truncated, and a burst of 0 taken as 1.
edgeshed_rate derive_rate(const edgeshed_class_policy& pol) {
  if (pol.tokens_per_sec == 0) return {};
  const uint64_t interval = kNsPerSec / pol.tokens_per_sec;
  return {interval, interval * (std::max<uint64_t>(pol.burst, 1) - 1)};
}

}  // namespace

uint64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

Result<Maps> Maps::from_skeleton(const Skeleton& skel) {
  Maps m;
  const std::pair<Fd*, const bpf_map*> all[] = {
      {&m.config_, skel->maps.es_config},
      {&m.control_, skel->maps.es_control},
      {&m.policy_, skel->maps.es_policy},
      {&m.ports_, skel->maps.es_ports},
      {&m.src4_, skel->maps.es_src4},
      {&m.src6_, skel->maps.es_src6},
      {&m.stats_, skel->maps.es_stats},
      {&m.inflight_, skel->maps.es_inflight},
      {&m.inflight_cls_, skel->maps.es_inflight_cls},
      {&m.inflight_peak_, skel->maps.es_inflight_peak},
      {&m.conns_, skel->maps.es_conns},
      {&m.conns_cls_, skel->maps.es_conns_cls},
      {&m.since_, skel->maps.es_inflight_since},
      {&m.since_cls_, skel->maps.es_inflight_since_cls},
      {&m.cohorts_, skel->maps.es_cohorts},
      {&m.latency_, skel->maps.es_latency},
      {&m.latency_ports_, skel->maps.es_latency_ports},
      {&m.services_, skel->maps.es_services},
      {&m.group_sheds_, skel->maps.es_group_sheds},
  };
  for (auto [fd, map] : all) {
    auto r = dup_map_fd(map);
    if (!r) return r.error();
    *fd = std::move(r).value();
  }
  return m;
}

Result<Maps> Maps::open_pinned(const std::string& dir) {
  Maps m;
  // The config map first: its ABI version is checked before any other map
  // is opened, so that no caller ever misreads another ABI's maps and an
  // older data plane, which lacks some of ours, is named as such.
  auto config = open_pin(dir, "es_config");
  if (!config) return config.error();
  m.config_ = std::move(config).value();
  auto cfg = m.read_config();
  if (!cfg) return cfg.error();
  if (cfg->abi_version != EDGESHED_ABI_VERSION) {
    return make_error("the data plane pinned in " + dir + " has ABI version " +
                      std::to_string(cfg->abi_version) + ", this edgeshed speaks " +
                      std::to_string(EDGESHED_ABI_VERSION) +
                      "; run `edgeshed detach` on that interface first (it removes any version), "
                      "then attach again");
  }
  const std::pair<Fd*, const char*> all[] = {
      {&m.control_, "es_control"},
      {&m.policy_, "es_policy"},
      {&m.ports_, "es_ports"},
      {&m.src4_, "es_src4"},
      {&m.src6_, "es_src6"},
      {&m.stats_, "es_stats"},
      {&m.inflight_, "es_inflight"},
      {&m.inflight_cls_, "es_inflight_cls"},
      {&m.inflight_peak_, "es_inflight_peak"},
      {&m.conns_, "es_conns"},
      {&m.conns_cls_, "es_conns_cls"},
      {&m.since_, "es_inflight_since"},
      {&m.since_cls_, "es_inflight_since_cls"},
      {&m.cohorts_, "es_cohorts"},
      {&m.latency_, "es_latency"},
      {&m.latency_ports_, "es_latency_ports"},
      {&m.services_, "es_services"},
      {&m.group_sheds_, "es_group_sheds"},
  };
  for (auto [fd, name] : all) {
    auto r = open_pin(dir, name);
    if (!r) return r.error();
    *fd = std::move(r).value();
  }
  return m;
}

Result<edgeshed_config> Maps::read_config() const {
  edgeshed_config cfg{};
  if (auto s = lookup(config_, &kZero, &cfg, "config map"); !s) return s.error();
  return cfg;
}

Status Maps::write_config(const edgeshed_config& cfg) const {
  return update(config_, &kZero, &cfg, "config map");
}

Result<edgeshed_control> Maps::read_control() const {
  edgeshed_control ctl{};
  if (auto s = lookup(control_, &kZero, &ctl, "control map"); !s) return s.error();
  return ctl;
}

Status Maps::publish(const edgeshed_policy_set& set, uint64_t heartbeat_ns, uint32_t salt) const {
  auto ctl = read_control();
  if (!ctl) return ctl.error();
  uint32_t next = (ctl->active_slot + 1) % EDGESHED_POLICY_SLOTS;
  edgeshed_policy_set out = set;
  for (uint32_t g = 0; g < EDGESHED_NUM_GROUPS; ++g) out.rate[g] = derive_rate(set.cls[g]);
  if (auto s = update(policy_, &next, &out, "policy map"); !s) return s;
  edgeshed_control fresh{};
  fresh.heartbeat_ns = heartbeat_ns;
  fresh.active_slot = next;
  fresh.salt = salt;
  return update(control_, &kZero, &fresh, "control map");
}

Result<edgeshed_policy_set> Maps::read_active_policy() const {
  auto ctl = read_control();
  if (!ctl) return ctl.error();
  uint32_t slot = ctl->active_slot % EDGESHED_POLICY_SLOTS;
  edgeshed_policy_set set{};
  if (auto s = lookup(policy_, &slot, &set, "policy map"); !s) return s.error();
  return set;
}

Status Maps::adjust_prefix_count(IpFamily family, int delta) const {
  auto cfg = read_config();
  if (!cfg) return cfg.error();
  __u32& count = family == IpFamily::kV4 ? cfg->src4_prefixes : cfg->src6_prefixes;
  count = static_cast<__u32>(static_cast<int>(count) + delta);
  return write_config(*cfg);
}

Status Maps::set_prefix(const IpPrefix& prefix, uint32_t class_id) const {
  edgeshed_class_value value{class_id};
  bool existed;
  int err;
  if (prefix.family == IpFamily::kV4) {
    edgeshed_lpm_v4 key{prefix.length, {}};
    std::memcpy(key.addr, prefix.address.data(), sizeof(key.addr));
    edgeshed_class_value old{};
    existed = bpf_map_lookup_elem(src4_.get(), &key, &old) == 0;
    err = bpf_map_update_elem(src4_.get(), &key, &value, BPF_ANY);
  } else {
    edgeshed_lpm_v6 key{prefix.length, {}};
    std::memcpy(key.addr, prefix.address.data(), sizeof(key.addr));
    edgeshed_class_value old{};
    existed = bpf_map_lookup_elem(src6_.get(), &key, &old) == 0;
    err = bpf_map_update_elem(src6_.get(), &key, &value, BPF_ANY);
  }
  if (err) return make_error("cannot write source prefix: " + errno_text(errno));
  return existed ? Status{} : adjust_prefix_count(prefix.family, +1);
}

Status Maps::remove_prefix(const IpPrefix& prefix) const {
  int err;
  if (prefix.family == IpFamily::kV4) {
    edgeshed_lpm_v4 key{prefix.length, {}};
    std::memcpy(key.addr, prefix.address.data(), sizeof(key.addr));
    err = bpf_map_delete_elem(src4_.get(), &key);
  } else {
    edgeshed_lpm_v6 key{prefix.length, {}};
    std::memcpy(key.addr, prefix.address.data(), sizeof(key.addr));
    err = bpf_map_delete_elem(src6_.get(), &key);
  }
  if (err) return make_error("cannot remove source prefix: " + errno_text(errno));
  return adjust_prefix_count(prefix.family, -1);
}

template <class Key>
Status clear_trie(const Fd& fd) {
  Key key{};
  // Deleting while walking restarts the walk from the first key each time.
  while (bpf_map_get_next_key(fd.get(), nullptr, &key) == 0) {
    if (bpf_map_delete_elem(fd.get(), &key) != 0) {
      return make_error("cannot clear source prefixes: " + errno_text(errno));
    }
  }
  return {};
}

Status Maps::clear_prefixes() const {
  if (auto s = clear_trie<edgeshed_lpm_v4>(src4_); !s) return s;
  if (auto s = clear_trie<edgeshed_lpm_v6>(src6_); !s) return s;
  auto cfg = read_config();
  if (!cfg) return cfg.error();
  cfg->src4_prefixes = 0;
  cfg->src6_prefixes = 0;
  return write_config(*cfg);
}

Result<edgeshed_stats> Maps::read_stats() const {
  const auto cpus = map_io::possible_cpus();
  if (!cpus) return cpus.error();
  std::vector<edgeshed_stats> per_cpu(*cpus);
  if (auto s = lookup(stats_, &kZero, per_cpu.data(), "counters"); !s) return s.error();
  edgeshed_stats sum{};
  for (const auto& c : per_cpu) add_stats(sum, c);
  return sum;
}

namespace {

// A service's counts per class: the entries of its groups (abi.h).
Result<ClassCounts> read_class_counts(const Fd& map, uint32_t service, const char* what) {
  ClassCounts counts{};
  for (uint32_t c = 0; c < EDGESHED_NUM_CLASSES; ++c) {
    uint32_t key = edgeshed_group(service, c);
    if (auto s = lookup(map, &key, &counts[c], what); !s) return s.error();
  }
  return counts;
}

Result<uint64_t> read_port_count(const Fd& map, uint16_t port, const char* what) {
  uint32_t key = port;
  uint64_t v = 0;
  if (auto s = lookup(map, &key, &v, what); !s) return s.error();
  return v;
}

}  // namespace

Result<ClassCounts> Maps::read_inflight_classes(uint32_t service) const {
  return read_class_counts(inflight_cls_, service, "in-flight map");
}

Result<uint64_t> Maps::read_inflight_port(uint16_t port) const {
  return read_port_count(inflight_, port, "in-flight map");
}

Result<ClassCounts> Maps::take_inflight_peaks(uint32_t service) const {
  auto peaks = read_class_counts(inflight_peak_, service, "in-flight peak map");
  if (!peaks) return peaks.error();
  for (uint32_t c = 0; c < EDGESHED_NUM_CLASSES; ++c) {
    const uint64_t zero = 0;
    const uint32_t group = edgeshed_group(service, c);
    if (bpf_map_update_elem(inflight_peak_.get(), &group, &zero, BPF_ANY) != 0) {
      return make_error("cannot reset the in-flight peak map: " + errno_text(errno));
    }
  }
  return peaks;
}

Result<LiveCounts> Maps::take_live_counts(uint32_t service) const {
  LiveCounts live;
  // The peak first: a request that enters service after it was taken is in
  // the live count read next, so the peak is never below it.
  auto peaks = take_inflight_peaks(service);
  if (!peaks) return peaks.error();
  auto inflight = read_inflight_classes(service);
  if (!inflight) return inflight.error();
  auto connections = read_connection_classes(service);
  if (!connections) return connections.error();
  live.inflight = *inflight;
  live.connections = *connections;
  for (size_t c = 0; c < live.peak_inflight.size(); ++c) {
    live.peak_inflight[c] = std::max((*peaks)[c], live.inflight[c]);
  }
  auto ages = read_inflight_ages(live.inflight, service);
  if (!ages) return ages.error();
  live.inflight_age_ns = *ages;
  auto queued = read_queue_evidence(service);
  if (!queued) return queued.error();
  live.queued = *queued;
  return live;
}

Result<ClassCounts> Maps::read_group_sheds(uint32_t service) const {
  ClassCounts sheds{};
  for (uint32_t c = 0; c < EDGESHED_NUM_CLASSES; ++c) {
    auto sum =
        map_io::lookup_percpu_sum(group_sheds_, edgeshed_group(service, c), "group shed map");
    if (!sum) return sum.error();
    sheds[c] = *sum;
  }
  return sheds;
}

Result<ClassCounts> Maps::read_connection_classes(uint32_t service) const {
  return read_class_counts(conns_cls_, service, "connection map");
}

Result<uint64_t> Maps::read_connection_port(uint16_t port) const {
  return read_port_count(conns_, port, "connection map");
}

Result<Maps::LatencyOwners> Maps::read_latency_owners() const {
  LatencyOwners owners{};
  if (auto s = lookup_all(latency_ports_, owners, "latency slot map"); !s) return s.error();
  return owners;
}

Result<std::vector<PortLatency>> Maps::read_latency() const {
  auto owners = read_latency_owners();
  if (!owners) return owners.error();
  const auto cpus = map_io::possible_cpus();
  if (!cpus) return cpus.error();
  std::vector<edgeshed_latency_slot> per_cpu(*cpus);
  std::vector<PortLatency> out;
  for (uint32_t s = 0; s < EDGESHED_MAX_LATENCY_PORTS; ++s) {
    if (!(*owners)[s].in_use) continue;
    if (auto st = lookup(latency_, &s, per_cpu.data(), "latency map"); !st) return st.error();
    PortLatency p;
    p.port = (*owners)[s].port;
    p.service = (*owners)[s].service;
    for (const auto& c : per_cpu) {
      for (size_t m = 0; m < kLatencyMeasures; ++m) {
        p.measures[m].count += c.measure[m].count;
        p.measures[m].sum_ns += c.measure[m].sum_ns;
        for (size_t b = 0; b < EDGESHED_LATENCY_BUCKETS; ++b) {
          p.measures[m].buckets[b] += c.measure[m].buckets[b];
        }
      }
    }
    out.push_back(p);
  }
  return out;
}

Result<std::vector<uint16_t>> Maps::unmeasured_ports() const {
  auto ports = read_ports();
  if (!ports) return ports.error();
  auto owners = read_latency_owners();
  if (!owners) return owners.error();
  std::vector<uint16_t> out;
  for (const auto& p : *ports) {
    if (!(p.protocols & EDGESHED_PORT_TCP)) continue;
    bool measured = false;
    for (const auto& o : *owners) measured = measured || (o.in_use && o.port == p.port);
    if (!measured) out.push_back(p.port);
  }
  return out;
}

}  // namespace edgeshed
