// Operator-facing names of every enum edgeshed shows or reads: the data
// plane's (edgeshed/abi.h), the control law's and the config's. One table
// each, indexed by the enum's value; the config file, the CLI, the control
// socket, the metrics and the logs all read these, so a name is changed here
// or nowhere. table<N>() refuses a table with a name too few or too many, so
// a value added to an enum is a build error here until it has its name.
//
// One API for every table: name_of, find, parse, all_names, one_of. An enum
// type above common/ (law::Level, config::Action) is bound to its table by a
// TableOf specialisation beside the enum, and then needs no table argument.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "common/result.h"
#include "edgeshed/abi.h"

namespace edgeshed::names {

template <std::size_t N>
using Table = std::array<std::string_view, N>;

// Exactly N names, one per value in the enum's order.
template <std::size_t N, class... Names>
consteval Table<N> table(const Names&... names) {
  static_assert(sizeof...(Names) == N, "an enum and its names table differ in count");
  return {std::string_view(names)...};
}

// enum edgeshed_protocol
inline constexpr auto kProtocols = table<EDGESHED_NUM_PROTOCOLS>("tcp", "quic");
// enum edgeshed_class
inline constexpr auto kClasses = table<EDGESHED_NUM_CLASSES>("critical", "normal", "background");
// enum edgeshed_mode
inline constexpr auto kModes = table<EDGESHED_NUM_MODES>("off", "observe", "enforce");
// enum edgeshed_action
inline constexpr auto kActions = table<EDGESHED_NUM_ACTIONS>("drop", "rst");
// enum edgeshed_port_requests: a port's `keepalive`
inline constexpr auto kKeepAlive = table<EDGESHED_NUM_PORT_REQUESTS>("pass", "refuse", "reclaim");
// enum edgeshed_draw
inline constexpr auto kDraws = table<EDGESHED_NUM_DRAWS>("source_hash", "random");
// enum edgeshed_hook; EDGESHED_HOOK_NONE ("none") is never written in a
// config, so hooks are read from kFirstHook on.
inline constexpr auto kHooks = table<EDGESHED_NUM_HOOKS>("none", "xdp", "xdp-generic", "tc");
inline constexpr std::size_t kFirstHook = EDGESHED_HOOK_XDP;
// enum edgeshed_shed_reason
inline constexpr auto kReasons =
    table<EDGESHED_NUM_SHED_REASONS>("none", "cap", "fraction", "rate", "idle");
// enum edgeshed_event_outcome
inline constexpr auto kOutcomes =
    table<EDGESHED_NUM_EVENT_OUTCOMES>("drop", "rst", "rst_capped", "would_shed", "request_refused",
                                       "would_refuse_request", "reclaimed", "would_reclaim");
// enum edgeshed_counter: the per-class counters
inline constexpr auto kCounters = table<EDGESHED_NUM_COUNTERS>(
    "admitted", "shed_cap", "shed_fraction", "shed_rate", "would_shed_cap", "would_shed_fraction",
    "would_shed_rate", "fail_open", "pass_mode_off", "rst_sent", "rst_capped", "requests_refused",
    "would_refuse_requests", "reclaimed", "would_reclaim");
// enum edgeshed_global_counter
inline constexpr auto kGlobalCounters = table<EDGESHED_NUM_GLOBAL_COUNTERS>(
    "unparsed", "fragment", "unprotected", "no_policy", "rst_failed", "events_lost",
    "rst_not_unicast", "rst_not_to_host", "shed_fragment", "too_deep", "shed_too_deep",
    "bad_checksum", "rst_reflect_limited", "quic_undersized", "request_rst_failed", "transit",
    "rst_vlan_unknown", "queue_gate");
// law::Level (law/types.h derives kNumLevels and kAllLevels from it).
inline constexpr auto kLevels = table<4>("normal", "elevated", "high", "critical");
// law::PolicyAction: a [policy] rule's `action`
inline constexpr auto kPolicyActions = table<4>("admit", "fraction", "cap", "shed");
// law::LimitAlgorithmKind: [limit] algorithm (config/reference.h says what each means)
inline constexpr auto kLimitAlgorithms = table<4>("static", "aimd", "gradient", "capacity");
// law::ColdStart: [limit] cold_start
inline constexpr auto kColdStarts = table<2>("open", "initial");
// law::AllStalePolicy: [daemon] all_stale
inline constexpr auto kAllStale = table<2>("hold", "fail_open");
// config::OnExit: [daemon] on_exit
inline constexpr auto kOnExit = table<2>("fail_open", "detach");
// [daemon] log_level: spdlog's level names, kept as text.
inline constexpr auto kLogLevels =
    table<7>("trace", "debug", "info", "warn", "error", "critical", "off");

// What the data plane did with a new connection, as metrics and events say it.
enum class Verdict { kAdmitted, kShed, kWouldShed };
inline constexpr auto kVerdicts = table<3>("admitted", "shed", "would_shed");

// Binds an enum type to its table: a specialisation beside the enum gives
//   static constexpr const auto& kNames = names::kX;  // indexed by value
//   static constexpr std::string_view kWhat = "x";    // for error messages
// and optionally kFirst, the first value a name may be read for.
template <class Enum>
struct TableOf;

template <class Enum>
concept Named = std::is_enum_v<Enum> && requires {
  TableOf<Enum>::kNames;
  TableOf<Enum>::kWhat;
};

template <Named Enum>
constexpr std::size_t first_of() {
  if constexpr (requires { TableOf<Enum>::kFirst; }) {
    return TableOf<Enum>::kFirst;
  } else {
    return 0;
  }
}

// The name of `value`, or "unknown" outside the table (a newer data plane's value).
template <std::size_t N, class Value>
requires std::is_integral_v<Value> || std::is_enum_v<Value>
constexpr std::string_view name_of(const Table<N>& names, Value value) {
  const auto index = static_cast<uint64_t>(value);
  return index < N ? names[index] : std::string_view("unknown");
}
template <Named Enum>
constexpr std::string_view name_of(Enum value) {
  return name_of(TableOf<Enum>::kNames, value);
}

// The value whose name is `name` (from index `first` on), if any.
template <std::size_t N>
constexpr std::optional<uint32_t> find(const Table<N>& names, std::string_view name,
                                       std::size_t first = 0) {
  for (std::size_t i = first; i < N; ++i) {
    if (names[i] == name) return static_cast<uint32_t>(i);
  }
  return std::nullopt;
}
template <Named Enum>
constexpr std::optional<Enum> find(std::string_view name) {
  const auto index = find(TableOf<Enum>::kNames, name, first_of<Enum>());
  if (!index) return std::nullopt;
  return static_cast<Enum>(*index);
}

// The names from index `first` on, e.g. as a command line option's choices.
template <std::size_t N>
std::vector<std::string> all_names(const Table<N>& names, std::size_t first = 0) {
  return std::vector<std::string>(names.begin() + first, names.end());
}

// "a, b or c": the names from `first` on, for a message.
template <std::size_t N>
std::string one_of(const Table<N>& names, std::size_t first = 0) {
  std::string text;
  for (std::size_t i = first; i < N; ++i) {
    if (i > first) text += i + 1 == N ? " or " : ", ";
    text += names[i];
  }
  return text;
}

// The names of `values`, each quoted, joined by `between` and the last two
// by " or ": "\"a\", \"b\" or \"c\"", for a message.
template <class Values>
requires Named<typename Values::value_type> std::string quoted_names(
    const Values& values, std::string_view between = ", ") {
  std::string text;
  std::size_t i = 0;
  for (auto value : values) {
    if (i > 0) text += i + 1 == values.size() ? std::string_view(" or ") : between;
    text += "\"" + std::string(name_of(value)) + "\"";
    ++i;
  }
  return text;
}

// Exactly a name of the table; the error lists the valid ones.
template <Named Enum>
Result<Enum> parse(std::string_view text) {
  if (auto value = find<Enum>(text)) return *value;
  std::string valid;
  for (std::size_t i = first_of<Enum>(); i < TableOf<Enum>::kNames.size(); ++i) {
    valid += (valid.empty() ? "" : ", ") + std::string(TableOf<Enum>::kNames[i]);
  }
  return make_error("unknown " + std::string(TableOf<Enum>::kWhat) + " \"" + std::string(text) +
                    "\" (expected one of: " + valid + ")");
}

// Every value of the enum, in order: the table's indices as the enum.
template <Named Enum>
constexpr auto all_values() {
  constexpr std::size_t kCount = TableOf<Enum>::kNames.size() - first_of<Enum>();
  std::array<Enum, kCount> values{};
  for (std::size_t i = 0; i < kCount; ++i) values[i] = static_cast<Enum>(i + first_of<Enum>());
  return values;
}

// True when `last` is the table's last value: an enum class that mirrors an
// ABI enum asserts this, so a value added to the ABI is a build error there.
template <Named Enum>
constexpr bool ends_at(Enum last) {
  return static_cast<std::size_t>(last) + 1 == TableOf<Enum>::kNames.size();
}

// Prints a bound enum by name; a namespace that declares such enums says
// `using names::operator<<;` for argument-dependent lookup to find it.
template <Named Enum>
std::ostream& operator<<(std::ostream& out, Enum value) {
  return out << name_of(value);
}

template <>
struct TableOf<Verdict> {
  static constexpr const auto& kNames = kVerdicts;
  static constexpr std::string_view kWhat = "verdict";
};

}  // namespace edgeshed::names
