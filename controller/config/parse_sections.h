// Parsers of the config file's sections, one per table or array of tables.
// parse_document (config.cpp) calls them in order; internal to config/.
// Each records its errors in the reader and leaves a default where a key is
// absent or invalid.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "config/config.h"
#include "config/toml_reader.h"

namespace edgeshed::config::sections {

// Sane bounds on counts, far above any real deployment, far below overflow.
inline constexpr uint64_t kMaxConnections = 1'000'000;
inline constexpr uint64_t kMaxRate = 1'000'000'000;

void parse_daemon(TableReader& reader, DaemonConfig& daemon);
// listen = "ADDRESS:PORT" (IPv6 in brackets) or "off"; not_ready_from = a level.
void parse_metrics(TableReader& reader, MetricsConfig& metrics);
// listen as [metrics] (off by default), weights = { <level> = percent, ... }, send_maxconn.
void parse_agent(TableReader& reader, AgentConfig& agent);
void parse_dataplane(TableReader& reader, DataplaneConfig& dataplane);

// One entry of [[interface]], [[port]] or [[prefix]]; `seen` maps what must
// be unique to the path of the entry that has it.
void parse_interface(TableReader& reader, std::vector<InterfaceConfig>& interfaces,
                     std::map<std::string, std::string>& seen);
// A port may be listed once per protocol, with one class for both.
void parse_port(TableReader& reader, std::vector<PortConfig>& ports,
                std::map<std::tuple<uint16_t, Protocol, std::string>, std::string>& seen);
void parse_prefix(TableReader& reader, std::vector<PrefixConfig>& prefixes,
                  std::map<std::string, std::string>& seen);
void check_prefix_counts(TableReader& root, const std::vector<PrefixConfig>& prefixes);

void parse_levels(TableReader& reader, law::LevelMachineConfig& levels);

// Readers of the [policy.<level>.<class>] tables, kept for the critical floor check.
using PolicyReaders = std::vector<std::pair<law::Level, TableReader>>;

void parse_policy(TableReader& reader, law::PolicyTable& policy, PolicyReaders& critical_rules);
// Critical traffic keeps its floor whatever the policy says. The law clamps
// at run time anyway; a config that asks for less is rejected rather than
// silently corrected, so the operator learns the rule from the error.
void check_critical_floor(const law::PolicyTable& policy, PolicyReaders& critical_rules,
                          const law::CriticalFloor& floor);
void parse_critical(TableReader& reader, law::CriticalFloor& floor, uint32_t& cap);

void parse_limit(TableReader& reader, law::LimitConfig& limit, std::string& latency_signal,
                 uint32_t& max_connections);

// One [[signal]] entry of one of `kinds`; `seen` maps names to the entry
// that has each.
void parse_signal(TableReader& reader, std::string_view source_name, const DaemonConfig& daemon,
                  SignalKinds kinds, std::vector<SignalConfig>& signals,
                  std::map<std::string, std::string>& seen);
// What a config that names no [[signal]] gets: how full the adaptive limit
// is, which needs nothing from the service and rises whenever the limit
// sheds. A port's latency objective is a signal in any config.
void add_default_signals(Config& config, std::string_view source_name);

}  // namespace edgeshed::config::sections
