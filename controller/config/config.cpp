// The document's assembly from its sections
// (parse_sections.h) in dependency order, and reading the file.
#include "config/config.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "common/names.h"
#include "config/parse_sections.h"
#include "config/signal_table.h"
#include "config/toml_reader.h"

namespace edgeshed::config {

std::string_view NetnsRef::key() const {
  switch (kind) {
    case Kind::kPid:
      return "pid";
    case Kind::kCgroup:
      return "cgroup";
    case Kind::kPath:
    case Kind::kListener:
      break;
  }
  return "netns";
}

std::string NetnsRef::describe() const {
  if (kind == Kind::kListener) return "netns listener (port " + std::to_string(port) + ")";
  return std::string(key()) + " " + (kind == Kind::kPid ? std::to_string(pid) : path);
}

std::string SignalConfig::locate(std::string_view key) const {
  std::optional<toml::source_position> position;
  if (params) {
    if (auto found = params->positions.find(key); found != params->positions.end()) {
      position = found->second;
    }
  }
  const std::string line_column =
      position ? std::to_string(position->line) + ":" + std::to_string(position->column)
               : std::string("0:0");
  return source_name + ":" + line_column + ": " + path + "." + std::string(key);
}

law::ControlLawConfig Config::law_config() const {
  law::ControlLawConfig law;
  law.levels = levels;
  law.policy = policy;
  law.critical_floor = critical_floor;
  law.limit = limit;
  law.all_stale = daemon.all_stale;
  law.mode = dataplane.mode;
  return law;
}

namespace {

// Runs `parse_one` on each table of an array of tables, with a reader whose
// path is "<key>[<index>]".
template <class ParseOne>
void for_each_entry(TableReader& parent, std::string_view key, ParseOne parse_one) {
  const toml::array* entries = parent.array_of_tables(key);
  if (entries == nullptr) return;
  for (std::size_t i = 0; i < entries->size(); ++i) {
    TableReader reader(parent.errors(), *entries->get(i)->as_table(),
                       std::string(key) + "[" + std::to_string(i) + "]");
    parse_one(reader);
    reader.reject_unknown_keys();
  }
}

// Parses the whole document; errors are collected, not fatal.
Config parse_document(const toml::table& document, std::string_view source_name, SignalKinds kinds,
                      ConfigErrors& errors) {
  Config config;
  TableReader root(errors, document, "");

  if (const toml::table* table = root.table("daemon")) {
    TableReader reader(errors, *table, "daemon");
    sections::parse_daemon(reader, config.daemon);
  }
  if (const toml::table* table = root.table("dataplane")) {
    TableReader reader(errors, *table, "dataplane");
    sections::parse_dataplane(reader, config.dataplane);
  }
  if (const toml::table* table = root.table("metrics")) {
    TableReader reader(errors, *table, "metrics");
    sections::parse_metrics(reader, config.metrics);
  }
  if (const toml::table* table = root.table("agent")) {
    TableReader reader(errors, *table, "agent");
    sections::parse_agent(reader, config.agent);
  }
  {
    std::map<std::string, std::string> seen;
    for_each_entry(root, "interface", [&](TableReader& reader) {
      sections::parse_interface(reader, config.interfaces, seen);
    });
  }
  {
    std::map<std::tuple<uint16_t, Protocol, std::string>, std::string> seen;
    for_each_entry(root, "port",
                   [&](TableReader& reader) { sections::parse_port(reader, config.ports, seen); });
  }
  {
    std::map<std::string, std::string> seen;
    for_each_entry(root, "prefix", [&](TableReader& reader) {
      sections::parse_prefix(reader, config.prefixes, seen);
    });
    sections::check_prefix_counts(root, config.prefixes);
  }
  if (const toml::table* table = root.table("levels")) {
    TableReader reader(errors, *table, "levels");
    sections::parse_levels(reader, config.levels);
  }
  if (const toml::table* table = root.table("critical")) {
    TableReader reader(errors, *table, "critical");
    sections::parse_critical(reader, config.critical_floor, config.critical_cap);
  }
  if (const toml::table* table = root.table("limit")) {
    TableReader reader(errors, *table, "limit");
    sections::parse_limit(reader, config.limit, config.latency_signal, config.max_connections);
  }
  // After [critical]: its cap is the default of policy.critical.critical.
  // After [limit]: the capacity limit is in force below high too.
  config.policy = law::default_policy_table(
      config.critical_cap, config.limit.algorithm == law::LimitAlgorithmKind::kCapacity);
  if (const toml::table* table = root.table("policy")) {
    TableReader reader(errors, *table, "policy");
    sections::PolicyReaders critical_rules;
    sections::parse_policy(reader, config.policy, critical_rules);
    sections::check_critical_floor(config.policy, critical_rules, config.critical_floor);
  }
  {
    std::map<std::string, std::string> seen;
    for_each_entry(root, "signal", [&](TableReader& reader) {
      sections::parse_signal(reader, source_name, config.daemon, kinds, config.signals, seen);
    });
  }
  sections::add_default_signals(config, source_name);
  if (!config.latency_signal.empty()) {
    bool found =
        std::any_of(config.signals.begin(), config.signals.end(),
                    [&](const SignalConfig& s) { return s.name == config.latency_signal; });
    if (!found) {
      TableReader reader(errors, *root.table("limit"), "limit");
      reader.invalid("latency_signal", "names no configured [[signal]]");
    }
  }
  root.reject_unknown_keys();
  return config;
}

}  // namespace

Result<Config> parse_config(std::string_view text, std::string_view source_name,
                            SignalKinds kinds) {
  toml::table document;
  try {
    document = toml::parse(text, source_name);
  } catch (const toml::parse_error& error) {
    const toml::source_position where = error.source().begin;
    return make_error(std::string(source_name) + ":" + std::to_string(where.line) + ":" +
                      std::to_string(where.column) + ": " +
                      escape_control_chars(error.description()));
  }
  ConfigErrors errors(source_name);
  Config config = parse_document(document, source_name, kinds, errors);
  if (!errors.empty()) return make_error(errors.joined());
  return config;
}

Result<Config> load_config(const std::string& path, SignalKinds kinds) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return make_error(path + ": cannot open: " + std::strerror(errno));
  std::error_code error;
  // A directory opens fine and reads as nothing: it would pass as an empty config.
  if (!std::filesystem::is_regular_file(path, error)) {
    return make_error(path + ": not a regular file");
  }
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad()) return make_error(path + ": cannot read: " + std::strerror(errno));
  return parse_config(text.str(), path, kinds);
}

}  // namespace edgeshed::config
