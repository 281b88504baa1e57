// Operator-facing names of the data plane's enums (edgeshed/abi.h) and of the
// control law's pressure levels: one table each, indexed by the enum's value.
// The config file, the CLI, the control socket, the metrics and the logs all
// write and read these names, so a name is changed here or nowhere.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "edgeshed/abi.h"

namespace edgeshed::names {

// enum edgeshed_protocol
inline constexpr std::array<std::string_view, EDGESHED_NUM_PROTOCOLS> kProtocols = {"tcp", "quic"};
// enum edgeshed_class
inline constexpr std::array<std::string_view, EDGESHED_NUM_CLASSES> kClasses = {
    "critical", "normal", "background"};
// enum edgeshed_mode
inline constexpr std::array<std::string_view, EDGESHED_NUM_MODES> kModes = {"off", "observe",
                                                                            "enforce"};
// enum edgeshed_action
inline constexpr std::array<std::string_view, EDGESHED_NUM_ACTIONS> kActions = {"drop", "rst"};
// enum edgeshed_port_requests: a port's `keepalive`
inline constexpr std::array<std::string_view, EDGESHED_NUM_PORT_REQUESTS> kKeepAlive = {
    "pass", "refuse", "reclaim"};
// enum edgeshed_draw
inline constexpr std::array<std::string_view, EDGESHED_NUM_DRAWS> kDraws = {"source_hash",
                                                                            "random"};
// enum edgeshed_hook; EDGESHED_HOOK_NONE ("none") is never written in a config.
inline constexpr std::array<std::string_view, EDGESHED_HOOK_TC + 1> kHooks = {"none", "xdp",
                                                                              "xdp-generic", "tc"};
// enum edgeshed_shed_reason
inline constexpr std::array<std::string_view, EDGESHED_REASON_IDLE + 1> kReasons = {
    "none", "cap", "fraction", "rate", "idle"};
// enum edgeshed_event_outcome
inline constexpr std::array<std::string_view, EDGESHED_NUM_EVENT_OUTCOMES> kOutcomes = {
    "drop",
    "rst",
    "rst_capped",
    "would_shed",
    "request_refused",
    "would_refuse_request",
    "reclaimed",
    "would_reclaim"};
// enum edgeshed_counter: the per-class counters
inline constexpr std::array<std::string_view, EDGESHED_NUM_COUNTERS> kCounters = {
    "admitted",
    "shed_cap",
    "shed_fraction",
    "shed_rate",
    "would_shed_cap",
    "would_shed_fraction",
    "would_shed_rate",
    "fail_open",
    "pass_mode_off",
    "rst_sent",
    "rst_capped",
    "requests_refused",
    "would_refuse_requests",
    "reclaimed",
    "would_reclaim"};
// enum edgeshed_global_counter
inline constexpr std::array<std::string_view, EDGESHED_NUM_GLOBAL_COUNTERS> kGlobalCounters = {
    "unparsed",
    "fragment",
    "unprotected",
    "no_policy",
    "rst_failed",
    "events_lost",
    "rst_not_unicast",
    "rst_not_to_host",
    "shed_fragment",
    "too_deep",
    "shed_too_deep",
    "bad_checksum",
    "rst_reflect_limited",
    "quic_undersized",
    "request_rst_failed",
    "transit",
    "rst_vlan_unknown"};
// law::Level (law/types.h, which asserts that the counts agree).
inline constexpr std::array<std::string_view, 4> kLevels = {"normal", "elevated", "high",
                                                            "critical"};

// What the data plane did with a new connection, as metrics and events say it.
enum class Verdict { kAdmitted, kShed, kWouldShed };
inline constexpr std::array<std::string_view, 3> kVerdicts = {"admitted", "shed", "would_shed"};

// The value whose name is `name` (from index `first` on), if any.
template <std::size_t N>
constexpr std::optional<uint32_t> find(const std::array<std::string_view, N>& table,
                                       std::string_view name, std::size_t first = 0) {
  for (std::size_t i = first; i < N; ++i) {
    if (table[i] == name) return static_cast<uint32_t>(i);
  }
  return std::nullopt;
}

// The name of `value`, or "unknown" outside the table (a newer data plane's value).
template <std::size_t N>
constexpr std::string_view name_of(const std::array<std::string_view, N>& table, uint64_t value) {
  return value < N ? table[value] : std::string_view("unknown");
}

// The names from index `first` on, e.g. as a command line option's choices.
template <std::size_t N>
std::vector<std::string> all_names(const std::array<std::string_view, N>& table,
                                   std::size_t first = 0) {
  return std::vector<std::string>(table.begin() + first, table.end());
}

constexpr std::string_view name_of(Verdict verdict) {
  return kVerdicts[static_cast<std::size_t>(verdict)];
}

}  // namespace edgeshed::names
