// The state file: the daemon's view of the world, rewritten atomically each
// tick to state.json in the run directory, so that `edgeshed status` can
// show signals, level and policy without talking to the daemon. One schema,
// written by the daemon and read by the CLI, both from the definitions in
// state.cpp; the JSON keeps its fields in their order (netns and deploy
// tests read it too).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "common/result.h"

namespace edgeshed::ipc {

// Numbers that can be missing (no sample yet) or broken (NaN, infinity) are
// null in the JSON, nullopt here.

// One signal, as the daemon last read it.
struct SignalView {
  std::string name;
  std::string kind;
  std::optional<double> value;
  double target = 0;
  std::optional<double> pressure;  // value / target
  std::optional<int64_t> age_ms;   // of the sample
  bool stale = false;
  bool hard_safety = false;
  std::string error;  // of the last read; empty (and absent from the JSON) when it worked
  bool operator==(const SignalView&) const = default;
};

// Kernel-measured latency of one kind over the daemon's window.
struct LatencyView {
  struct Figures {
    std::optional<double> per_sec;
    std::optional<double> p50_ms;
    std::optional<double> p90_ms;
    std::optional<double> p99_ms;
    std::optional<double> mean_ms;
    bool operator==(const Figures&) const = default;
  };
  uint64_t count = 0;
  std::optional<Figures> figures;  // none measured: {"count": 0} alone
  bool operator==(const LatencyView&) const = default;
};

struct PortLatencyView {
  std::string port;  // the port number, or "all" for the protected ports together
  LatencyView response;
  LatencyView connection;
  bool operator==(const PortLatencyView&) const = default;
};

// What the adaptive limit learnt of the service while it did not queue.
struct LearntView {
  double floor_ms = 0.0;  // response time with no queue
  double rate = 0.0;      // completions per second then
  uint32_t inflight = 0;  // requests in service then
  uint32_t peak_inflight = 0;
  uint64_t readings = 0;  // ticks learnt from
  bool operator==(const LearntView&) const = default;
};

// The policy the law chose for one class; nullopt: unlimited.
struct ClassPolicyView {
  std::string name;
  std::optional<double> admit_fraction;
  std::optional<uint32_t> inflight_cap;
  std::optional<uint32_t> tokens_per_sec;
  bool operator==(const ClassPolicyView&) const = default;
};

// The operator's runtime changes in force; left_s nullopt: until removed.
struct TimedChangeView {
  std::string value;  // the mode, action or level
  std::optional<double> left_s;
  bool operator==(const TimedChangeView&) const = default;
};

struct ClassChangeView {
  std::string name;
  std::optional<double> admit_fraction;
  std::optional<uint32_t> inflight_cap;
  std::optional<uint32_t> tokens_per_sec;
  std::optional<uint32_t> burst;
  std::optional<double> left_s;
  bool operator==(const ClassChangeView&) const = default;
};

// A port or prefix protected as a class, or removed (traffic_class nullopt).
struct ClassedView {
  std::string key;  // the port number or the canonical CIDR
  std::optional<std::string> traffic_class;
  bool operator==(const ClassedView&) const = default;
};

struct ActiveChanges {
  std::optional<TimedChangeView> mode;
  std::optional<TimedChangeView> action;
  std::optional<TimedChangeView> level;
  std::vector<ClassChangeView> classes;
  std::vector<ClassedView> ports;
  std::vector<ClassedView> prefixes;
  bool empty() const {
    return !mode && !action && !level && classes.empty() && ports.empty() && prefixes.empty();
  }
  bool operator==(const ActiveChanges&) const = default;
};

struct State {
  int pid = 0;
  std::string config;        // path of the daemon's config file
  int64_t monotonic_ms = 0;  // CLOCK_MONOTONIC when written
  int64_t tick_ms = 0;       // the daemon's tick (daemon/state_refresh.h: when it is written)
  std::string level;
  int64_t level_since_ms = 0;  // CLOCK_MONOTONIC
  bool level_pinned = false;
  std::optional<double> pressure;
  std::vector<std::string> drivers;  // signals at the max pressure
  std::string mode;
  bool fail_open = false;
  bool all_stale = false;
  uint32_t adaptive_limit = 0;
  bool adaptive_limit_open = false;  // absent in a state file before it: false
  std::optional<LearntView> learnt;  // nothing learnt yet, or a daemon before it: absent
  std::vector<std::string> interfaces;
  std::vector<SignalView> signals;
  std::optional<std::vector<PortLatencyView>> latency;  // none measured: absent
  std::vector<ClassPolicyView> classes;
  ActiveChanges runtime_changes;
  std::optional<std::string> metrics;  // address:port of the metrics endpoint; null when off
  bool operator==(const State&) const = default;
};

nlohmann::ordered_json to_json(const ActiveChanges& changes);
Result<ActiveChanges> parse_active_changes(const nlohmann::ordered_json& j);

nlohmann::ordered_json to_json(const State& state);
// Refuses what is not the schema: a missing field or one of the wrong type
// is an error naming the field. Fields it does not know are ignored.
Result<State> parse_state(const nlohmann::ordered_json& j);

Status write_state_file(const State& state, const std::string& path);

}  // namespace edgeshed::ipc
