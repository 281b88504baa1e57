// One attached interface's status, as `status --json` prints it under
// "interfaces" and as `status` and `top` read it back: each key is written
// once, in the definitions in interface_status.cpp that both to_json and
// interface_status_from_json walk, and read through a member, so a misspelt
// key is a compile error rather than a null at runtime.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "common/stats.h"
#include "edgeshed/abi.h"

namespace edgeshed {

// The per-class counters (enum edgeshed_counter), by the names of
// names::kCounters on the wire.
struct CounterRow {
  ClassCounters values{};
  uint64_t operator[](int counter) const { return values[counter]; }
  bool operator==(const CounterRow&) const = default;
};

struct PortStatus {
  uint32_t port = 0;
  std::string traffic_class;
  std::vector<std::string> protocols;  // names::kProtocols
  std::string keepalive;               // names::kKeepAlive, or "unknown"
  // The service's network namespace where it is not the interface's:
  // "net:[INODE]" as /proc/PID/ns/net names it, or "gone".
  std::optional<std::string> netns;
  // "cgroup" where its requests are timed at its service's cgroup (abi.h,
  // EDGESHED_TIMERS_CGROUP); none at the tracepoints.
  std::optional<std::string> timers;
  // A service of its own (its port number is served in another namespace
  // too, abi.h): its id, its requests in service and its limit (the cap of
  // the port's class; 0: none).
  std::optional<uint32_t> service;
  std::optional<uint64_t> service_inflight;
  std::optional<uint32_t> service_cap;
  bool operator==(const PortStatus&) const = default;
};

struct ClassStatus {
  double shed_fraction = 0;
  uint32_t inflight_cap = 0;  // 0: none
  uint32_t tokens_per_sec = 0;
  uint32_t burst = 0;
  uint64_t inflight = 0;
  uint64_t connections = 0;
  uint32_t connection_cap = 0;  // 0: none
  CounterRow counters;
  bool operator==(const ClassStatus&) const = default;
};

struct RstReflectStatus {
  uint32_t per_sec = 0;
  uint32_t burst = 1;
  uint32_t prefix_v4 = 0;
  uint32_t prefix_v6 = 0;
  uint32_t per_conn = 0;
  bool operator==(const RstReflectStatus&) const = default;
};

struct QuicStatus {
  std::array<CounterRow, EDGESHED_NUM_CLASSES> classes{};
  bool protected_ports = false;  // "protected": a port is protected for QUIC
  bool operator==(const QuicStatus&) const = default;
};

// Per second, between two readings of the counters.
struct ClassRates {
  double admitted = 0;
  double shed = 0;  // all reasons
  double shed_cap = 0;
  double shed_fraction = 0;
  double shed_rate = 0;
  double would_shed = 0;  // all reasons
  double fail_open = 0;
  double rst_sent = 0;
  double rst_capped = 0;
  bool operator==(const ClassRates&) const = default;
};

struct RatesStatus {
  double interval_s = 0;
  std::array<ClassRates, EDGESHED_NUM_CLASSES> classes{};
  bool operator==(const RatesStatus&) const = default;
};

// The settings, policy, in-flight counts and counters of the pinned maps.
struct InterfaceStatus {
  std::string iface;
  // Unreadable: only iface and error are meaningful (and printed).
  std::optional<std::string> error;
  uint32_t abi_version = 0;
  std::string hook, mode, action, draw;
  uint64_t heartbeat_timeout_ms = 0;         // 0: fail-static
  std::optional<uint64_t> heartbeat_age_ms;  // none: never published
  bool fail_open = false;
  std::optional<std::string> fail_open_reason;  // when fail_open
  uint32_t events_per_sec_per_cpu = 0;
  uint32_t rst_per_sec_per_cpu = 0;
  RstReflectStatus rst_reflect;
  uint32_t hash_prefix_v4 = 0;
  uint32_t hash_prefix_v6 = 0;
  uint32_t level = 0;
  uint64_t policy_generation = 0;
  std::vector<PortStatus> ports;
  std::array<ClassStatus, EDGESHED_NUM_CLASSES> classes{};
  QuicStatus quic;
  std::array<uint64_t, EDGESHED_NUM_GLOBAL_COUNTERS> counters{};  // names::kGlobalCounters
  std::optional<RatesStatus> rates;                               // from a second reading
  std::optional<std::string> fail_static_note;  // status_json: why no heartbeat is awaited
  bool operator==(const InterfaceStatus&) const = default;
};

nlohmann::ordered_json to_json(const InterfaceStatus& status);
Result<InterfaceStatus> interface_status_from_json(const nlohmann::ordered_json& j);

}  // namespace edgeshed
