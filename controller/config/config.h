// The daemon's configuration, parsed from TOML into plain values.
//
// Parsing is a pure function of the text: a reload parses into a new Config
// and the daemon swaps it in only on success, so a bad edit never half-applies.
// Every key is validated and unknown keys are errors, because a misspelt key
// that silently does nothing is worse than a refusal to start. Each error
// names file, line:column, key, value and the allowed range; all errors of a
// file are reported at once, one per line. examples/edgeshed.toml documents
// every key with its default and range.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/ip_prefix.h"
#include "common/names.h"
#include "common/result.h"
#include "edgeshed/abi.h"
#include "law/control_law.h"
#include "law/level_machine.h"
#include "law/limit_algorithm.h"
#include "law/policy.h"
#include "law/types.h"

namespace edgeshed::config {

// What the daemon leaves in the kernel when it exits.
enum class OnExit {
  kFailOpen,  // keep the program attached with an admit-all policy
  kDetach,    // remove the program
};

// What a [[port]] protects: new TCP connections, or new QUIC connections on
// the UDP port of that number.
enum class Protocol : uint8_t { kTcp = EDGESHED_PROTO_TCP, kQuic = EDGESHED_PROTO_QUIC };
enum class Action { kDrop = EDGESHED_ACTION_DROP, kRst = EDGESHED_ACTION_RST };
enum class Draw { kSourceHash = EDGESHED_DRAW_SOURCE_HASH, kRandom = EDGESHED_DRAW_RANDOM };
enum class Hook {
  kXdp = EDGESHED_HOOK_XDP,
  kXdpGeneric = EDGESHED_HOOK_XDP_GENERIC,
  kTc = EDGESHED_HOOK_TC,
};

using names::operator<<;

}  // namespace edgeshed::config

// The names of the enums above: common/names.h's tables, e.g.
// names::name_of(config::Action::kRst), names::parse<config::Hook>(text).
namespace edgeshed::names {

template <>
struct TableOf<config::OnExit> {
  static constexpr const auto& kNames = kOnExit;
  static constexpr std::string_view kWhat = "on_exit";
};
template <>
struct TableOf<config::Protocol> {
  static constexpr const auto& kNames = kProtocols;
  static constexpr std::string_view kWhat = "protocol";
};
template <>
struct TableOf<config::Action> {
  static constexpr const auto& kNames = kActions;
  static constexpr std::string_view kWhat = "action";
};
template <>
struct TableOf<config::Draw> {
  static constexpr const auto& kNames = kDraws;
  static constexpr std::string_view kWhat = "draw";
};
template <>
struct TableOf<config::Hook> {
  static constexpr const auto& kNames = kHooks;
  static constexpr std::string_view kWhat = "hook";
  static constexpr std::size_t kFirst = kFirstHook;
};

}  // namespace edgeshed::names

namespace edgeshed::config {

// A value added to a table (most mirror an ABI enum) is a build error here.
static_assert(names::ends_at(OnExit::kDetach));
static_assert(names::ends_at(Protocol::kQuic));
static_assert(names::ends_at(Action::kRst));
static_assert(names::ends_at(Draw::kRandom));
static_assert(names::ends_at(Hook::kTc));

struct DaemonConfig {
  std::chrono::nanoseconds tick = std::chrono::milliseconds(100);
  OnExit on_exit = OnExit::kFailOpen;
  // The data plane admits everything when the heartbeat is older; 0: never
  // (fail-static, the last policy stays).
  std::chrono::nanoseconds heartbeat_timeout = std::chrono::seconds(1);
  law::AllStalePolicy all_stale = law::AllStalePolicy::kHold;
  std::string log_level = "info";  // spdlog level name
  // Scheduling priority the daemon raises itself to: it must keep deciding
  // when the host is starved of CPU, which is when shedding matters.
  int32_t nice = -10;
  // State file, level file, control socket, runtime changes and locks.
  std::string run_dir = "/run/edgeshed";
  // What the limit learnt of the service (learnt.json), kept across restarts
  // and reboots. Empty: /var/lib/edgeshed for the default run_dir, else
  // run_dir/state, so that two daemons on one host never share it.
  std::string state_dir;

  std::string effective_state_dir() const {
    if (!state_dir.empty()) return state_dir;
    return run_dir == "/run/edgeshed" ? "/var/lib/edgeshed" : run_dir + "/state";
  }
};

// Where a listener of the daemon listens: `listen` in [metrics] and [agent].
struct ListenConfig {
  bool enabled = false;
  std::string address;
  uint16_t port = 0;
  bool operator==(const ListenConfig&) const = default;
};

// The Prometheus endpoint (/metrics), the level endpoint (/level) and the
// readiness endpoint (/ready).
struct MetricsConfig {
  ListenConfig listen = {true, "127.0.0.1", 9477};  // loopback: not exposed unless asked
  // GET /ready answers 503 from this level up (and before the first tick).
  law::Level not_ready_from = law::Level::kCritical;
};

// What the HAProxy agent-check responder answers (daemon/agent_reply.h).
struct AgentReplyConfig {
  // Percent of the server's configured weight, indexed by law::Level; never
  // rising with the level.
  std::array<uint32_t, law::kNumLevels> weight_percent = {100, 60, 25, 0};
  // Send the normal class's in-flight cap as maxconn:N (maxconn:0, no limit,
  // while none is enforced).
  bool send_maxconn = true;
};

// The HAProxy agent-check responder, off unless a listen address is given.
struct AgentConfig {
  ListenConfig listen;
  AgentReplyConfig reply;
};

// The reflection limit on RSTs toward one sender network (abi.h).
struct RstReflectConfig {
  uint32_t per_sec = EDGESHED_DEFAULT_RST_REFLECT_PER_SEC;  // 0: no limit per network
  uint32_t burst = EDGESHED_DEFAULT_RST_REFLECT_BURST;
  uint32_t prefix_v4 = EDGESHED_DEFAULT_RST_REFLECT_PREFIX4;
  uint32_t prefix_v6 = EDGESHED_DEFAULT_RST_REFLECT_PREFIX6;
  uint32_t per_conn = EDGESHED_DEFAULT_RST_REFLECT_PER_CONN;  // 0: a network earns none

  edgeshed_rst_reflect to_abi() const {
    return {per_sec, burst, static_cast<__u8>(prefix_v4), static_cast<__u8>(prefix_v6),
            static_cast<__u16>(per_conn)};
  }
};

struct DataplaneConfig {
  law::Mode mode = law::Mode::kObserve;
  Action action = Action::kRst;
  Draw draw = Draw::kSourceHash;
  std::chrono::nanoseconds salt_rotation = std::chrono::seconds(60);
  // The RST ceiling per CPU, above the reflection limit per network.
  uint32_t rst_per_sec_per_cpu = EDGESHED_DEFAULT_RST_PER_SEC_PER_CPU;
  RstReflectConfig rst_reflect;
  // Leading bits of a source address the source-hash draw covers.
  uint32_t hash_prefix_v4 = EDGESHED_DEFAULT_HASH_PREFIX4;
  uint32_t hash_prefix_v6 = EDGESHED_DEFAULT_HASH_PREFIX6;
  // Sampled shed events for `edgeshed events`: at most this many per CPU
  // and second (0: none), from 1 in event_sample sheds.
  uint32_t events_per_sec_per_cpu = 100;
  uint32_t event_sample = 1;
  // Destinations decided besides the host's own addresses and local routes
  // (pod networks, VIPs, services the host routes to): SYNs to any other
  // destination are transit, passed untouched.
  std::vector<IpPrefix> destinations;
};

struct InterfaceConfig {
  std::string name;
  Hook hook = Hook::kXdp;
  // The config names the hook; otherwise the attach may take another where
  // xdp would not deliver RSTs (dataplane/hook_choice.h: a veth).
  bool hook_named = false;
  // "<file>:<line>:<column>: interface[i].name", for the daemon's errors about an
  // interface it cannot find (the parse cannot know the host's interfaces).
  std::string where;
};

// The network namespace of a port's service where it is not the
// interface's own (a container's): named by a namespace file (`ip netns`'s
// /run/netns/NAME, /proc/PID/ns/net), a process, a cgroup whose first
// process is in it (a pod's), or as the one namespace with a socket
// listening on the port. Resolved again every tick: pods come and go.
struct NetnsRef {
  enum class Kind { kPath, kPid, kCgroup, kListener };
  Kind kind = Kind::kPath;
  std::string path;   // kPath: the namespace file; kCgroup: the cgroup's folder
  uint32_t pid = 0;   // kPid
  uint16_t port = 0;  // kListener: the port its service listens on

  // The [[port]] key that names it: "netns", "pid" or "cgroup".
  std::string_view key() const;
  // As the config names it: "netns /run/netns/a", "pid 42", "cgroup /sys/...",
  // "netns listener (port 8080)".
  std::string describe() const;
  bool operator==(const NetnsRef&) const = default;
};

struct PortConfig {
  uint16_t port = 0;
  Protocol protocol = Protocol::kTcp;
  law::TrafficClass traffic_class = law::TrafficClass::kNormal;
  // p99 response time the operator wants (as the kernel measures it); when
  // set, a kernel_latency signal with this target joins the signals.
  std::optional<std::chrono::nanoseconds> latency_objective;
  // enum edgeshed_port_requests: whether a new request on an open (keep-
  // alive) connection is refused while the class is at its cap (TCP).
  uint32_t keepalive = EDGESHED_REQUESTS_PASS;
  // Empty: the service runs in the interface's network namespace.
  std::optional<NetnsRef> netns;
};

struct PrefixConfig {
  IpPrefix prefix;
  law::TrafficClass traffic_class = law::TrafficClass::kCritical;
};

// A signal's kind-specific keys (config/signal_table.h). Declared only: most
// of the daemon includes this header, and toml++ cost clang-tidy 3.3 s in
// each file that included it.
struct SignalTable;

// A signal kind as the parser sees it. The kinds are listed in one table,
// signals/signal_kinds.cpp, which is handed to parse_config: config/ sits
// below signals/ and cannot include it.
// Every key but the common ones is kept in params, for the kind to check
// when its source is made (signals/signal_params.h).
struct SignalKindRule {
  std::string_view name;
};
using SignalKinds = std::span<const SignalKindRule>;

struct SignalConfig {
  std::string name;
  std::string kind = "synthetic";  // a name of the kinds table
  double target = 1.0;
  bool hard_safety = false;
  std::chrono::nanoseconds stale_after = std::chrono::seconds(1);
  // Kind-specific keys as written, for the signal implementation to read
  // (config/signal_table.h); null when there are none. Checked by the kind
  // (signals/<kind>_signal.cpp) when its source is made, with errors from
  // locate().
  std::shared_ptr<const SignalTable> params;
  std::string source_name;  // file the signal came from
  std::string path;         // "signal[2]"

  // "<file>:<line>:<column>: signal[2].<key>" for an error about a param.
  std::string locate(std::string_view key) const;
};

struct Config {
  DaemonConfig daemon;
  DataplaneConfig dataplane;
  MetricsConfig metrics;
  AgentConfig agent;
  std::vector<InterfaceConfig> interfaces;
  std::vector<PortConfig> ports;
  std::vector<PrefixConfig> prefixes;
  law::LevelMachineConfig levels;
  law::PolicyTable policy = law::default_policy_table();
  law::LimitConfig limit;
  // The signal whose value (seconds) is the observed latency that the limit
  // algorithm adapts to, e.g. a probe's connect time; empty: none.
  std::string latency_signal;
  // The operator's hard cap on each class's established connections (file
  // descriptors, memory), whatever the level; 0: none. The limit caps
  // requests in service, never connections.
  uint32_t max_connections = 0;
  std::vector<SignalConfig> signals;
  // No [[signal]] was configured: the daemon's own defaults (how full the
  // adaptive limit is) were filled in.
  bool default_signals = false;
  law::CriticalFloor critical_floor;
  uint32_t critical_cap = law::kUnlimited;  // default cap of critical at level critical

  // The part the control law needs.
  law::ControlLawConfig law_config() const;
};

// `kinds` are the signal kinds a [[signal]] may name: signals::parse_config
// and signals::load_config hand the table of them.
Result<Config> parse_config(std::string_view text, std::string_view source_name, SignalKinds kinds);
Result<Config> load_config(const std::string& path, SignalKinds kinds);

// A config parses without an [[interface]] or a [[port]], but a daemon
// started from it would look healthy and protect nothing: the refusal names
// the file and what to add (protects.cpp).
Status check_protects_something(const Config& config, const std::string& path);

}  // namespace edgeshed::config
