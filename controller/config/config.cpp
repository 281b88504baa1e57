#include "config/config.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>

#include "config/duration.h"
#include "config/toml_reader.h"

namespace edgeshed::config {

using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::nanoseconds;
using std::chrono::seconds;

std::string_view to_string(OnExit value) {
  return value == OnExit::kFailOpen ? "fail_open" : "detach";
}

std::string_view to_string(Action value) { return value == Action::kDrop ? "drop" : "rst"; }

std::string_view to_string(Draw value) {
  return value == Draw::kSourceHash ? "source_hash" : "random";
}

std::string_view to_string(Hook value) {
  switch (value) {
    case Hook::kXdp:
      return "xdp";
    case Hook::kXdpGeneric:
      return "xdp-generic";
    case Hook::kTc:
      return "tc";
  }
  return "unknown";
}

std::string_view to_string(SignalKind value) {
  switch (value) {
    case SignalKind::kInflight:
      return "inflight";
    case SignalKind::kAcceptQueue:
      return "accept_queue";
    case SignalKind::kDataplane:
      return "dataplane";
    case SignalKind::kNetstat:
      return "netstat";
    case SignalKind::kPsi:
      return "psi";
    case SignalKind::kPrometheus:
      return "prometheus";
    case SignalKind::kProbe:
      return "probe";
    case SignalKind::kSynthetic:
      return "synthetic";
    case SignalKind::kFile:
      return "file";
    case SignalKind::kKernelLatency:
      return "kernel_latency";
    case SignalKind::kLimit:
      return "limit";
  }
  return "unknown";
}

std::string SignalConfig::locate(std::string_view key) const {
  auto position = param_positions.find(key);
  const std::string line_column =
      position == param_positions.end()
          ? std::string("0:0")
          : std::to_string(position->second.line) + ":" + std::to_string(position->second.column);
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

constexpr double kInfinity = std::numeric_limits<double>::infinity();
// Sane bounds on counts, far above any real deployment, far below overflow.
constexpr uint64_t kMaxConnections = 1'000'000;
constexpr uint64_t kMaxRate = 1'000'000'000;
constexpr std::size_t kMaxInterfaceName = 15;  // IFNAMSIZ - 1
constexpr std::size_t kMaxSignalName = 64;
constexpr int32_t kMinNice = -20;  // setpriority(2)'s range
constexpr int32_t kMaxNice = 19;

const std::initializer_list<std::pair<std::string_view, law::TrafficClass>> kClassNames = {
    {"critical", law::TrafficClass::kCritical},
    {"normal", law::TrafficClass::kNormal},
    {"background", law::TrafficClass::kBackground},
};

void parse_daemon(TableReader& reader, DaemonConfig& daemon) {
  reader.duration("tick", daemon.tick, milliseconds(10), seconds(10));
  reader.choice("on_exit", daemon.on_exit,
                {{"fail_open", OnExit::kFailOpen}, {"detach", OnExit::kDetach}});
  const bool heartbeat_set = reader.duration("heartbeat_timeout", daemon.heartbeat_timeout,
                                             milliseconds(10), std::chrono::hours(1),
                                             /*zero_allowed=*/true);
  reader.choice(
      "all_stale", daemon.all_stale,
      {{"hold", law::AllStalePolicy::kHold}, {"fail_open", law::AllStalePolicy::kFailOpen}});
  std::string log_level = daemon.log_level;
  if (reader.choice("log_level", log_level,
                    {{"trace", std::string("trace")},
                     {"debug", std::string("debug")},
                     {"info", std::string("info")},
                     {"warn", std::string("warn")},
                     {"error", std::string("error")},
                     {"critical", std::string("critical")},
                     {"off", std::string("off")}})) {
    daemon.log_level = log_level;
  }
  reader.signed_integer("nice", daemon.nice, kMinNice, kMaxNice);
  if (reader.string("run_dir", daemon.run_dir) &&
      (daemon.run_dir.empty() || daemon.run_dir.front() != '/')) {
    reader.invalid("run_dir", "must be an absolute path");
  }
  const bool heartbeat_invalid =
      !heartbeat_set && reader.source_table().contains("heartbeat_timeout");
  // One late tick must not make the data plane fail open.
  if (!heartbeat_invalid && daemon.heartbeat_timeout != nanoseconds(0) &&
      daemon.heartbeat_timeout < 2 * daemon.tick) {
    const std::string problem =
        "must be 0 or at least 2 x daemon.tick (" + format_duration(2 * daemon.tick) + ")";
    reader.invalid(heartbeat_set ? "heartbeat_timeout" : "tick", problem);
  }
  reader.reject_unknown_keys();
}

// listen = "ADDRESS:PORT" (IPv6 in brackets) or "off".
void parse_metrics(TableReader& reader, MetricsConfig& metrics) {
  std::string listen;
  if (reader.string("listen", listen)) {
    if (listen == "off") {
      metrics.enabled = false;
    } else {
      auto colon = listen.rfind(':');
      std::string host = colon == std::string::npos ? "" : listen.substr(0, colon);
      if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
        host = host.substr(1, host.size() - 2);
      }
      uint32_t port = 0;
      bool port_ok = colon != std::string::npos && colon + 1 < listen.size();
      for (size_t i = colon + 1; port_ok && i < listen.size(); ++i) {
        port_ok = std::isdigit(static_cast<unsigned char>(listen[i])) && port < 65536;
        port = port * 10 + static_cast<uint32_t>(listen[i] - '0');
      }
      auto address = parse_ip_prefix(host + (host.find(':') != std::string::npos ? "/128" : "/32"));
      if (!port_ok || port == 0 || port > 65535 || !address) {
        reader.invalid("listen",
                       "must be \"ADDRESS:PORT\" (e.g. \"127.0.0.1:9477\", \"[::1]:9477\"), "
                       "port 1..65535, or \"off\"");
      } else {
        metrics.address = host;
        metrics.port = static_cast<uint16_t>(port);
      }
    }
  }
  reader.reject_unknown_keys();
}

void parse_dataplane(TableReader& reader, DataplaneConfig& dataplane) {
  reader.choice("mode", dataplane.mode,
                {{"off", law::Mode::kOff},
                 {"observe", law::Mode::kObserve},
                 {"enforce", law::Mode::kEnforce}});
  reader.choice("action", dataplane.action, {{"drop", Action::kDrop}, {"rst", Action::kRst}});
  reader.choice("draw", dataplane.draw,
                {{"source_hash", Draw::kSourceHash}, {"random", Draw::kRandom}});
  reader.duration("salt_rotation", dataplane.salt_rotation, seconds(1), std::chrono::hours(24));
  reader.integer("rst_per_sec_per_cpu", dataplane.rst_per_sec_per_cpu, 0, 10'000'000);
  reader.integer("events_per_sec_per_cpu", dataplane.events_per_sec_per_cpu, 0, 1'000'000);
  reader.integer("event_sample", dataplane.event_sample, 1, 1'000'000);
  reader.reject_unknown_keys();
}

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

void parse_interface(TableReader& reader, std::vector<InterfaceConfig>& interfaces,
                     std::map<std::string, std::string>& seen) {
  InterfaceConfig interface;
  reader.require("name");
  if (reader.string("name", interface.name)) {
    const bool bad_char = std::any_of(interface.name.begin(), interface.name.end(), [](char c) {
      return c == '/' || c == ':' || c <= ' ' || c == 0x7f;
    });
    if (interface.name.empty() || interface.name.size() > kMaxInterfaceName || bad_char) {
      reader.invalid("name",
                     "must be an interface name of 1-15 characters without '/', ':' or spaces");
    } else if (auto [it, inserted] = seen.emplace(interface.name, reader.path()); !inserted) {
      reader.invalid("name", "duplicate of " + it->second);
    }
  }
  reader.choice("hook", interface.hook,
                {{"xdp", Hook::kXdp}, {"xdp-generic", Hook::kXdpGeneric}, {"tc", Hook::kTc}});
  interfaces.push_back(interface);
}

void parse_port(TableReader& reader, std::vector<PortConfig>& ports,
                std::map<uint16_t, std::string>& seen) {
  PortConfig port;
  uint32_t number = 0;
  reader.require("port");
  if (reader.integer("port", number, 1, 65535)) {
    port.port = static_cast<uint16_t>(number);
    if (auto [it, inserted] = seen.emplace(port.port, reader.path()); !inserted) {
      reader.invalid("port", "duplicate of " + it->second);
    }
  }
  reader.choice("class", port.traffic_class, kClassNames);
  nanoseconds objective{0};
  if (reader.duration("latency_objective", objective, milliseconds(1), minutes(1))) {
    port.latency_objective = objective;
  }
  ports.push_back(port);
}

void parse_prefix(TableReader& reader, std::vector<PrefixConfig>& prefixes,
                  std::map<std::string, std::string>& seen) {
  PrefixConfig prefix;
  std::string cidr;
  reader.require("cidr");
  if (reader.string("cidr", cidr)) {
    Result<IpPrefix> parsed = parse_ip_prefix(cidr);
    if (!parsed) {
      reader.invalid("cidr", parsed.error().message);
    } else {
      prefix.prefix = parsed.value();
      if (auto [it, inserted] = seen.emplace(to_string(prefix.prefix), reader.path()); !inserted) {
        reader.invalid("cidr", "duplicate of " + it->second);
      }
    }
  }
  reader.require("class");
  reader.choice("class", prefix.traffic_class, kClassNames);
  prefixes.push_back(prefix);
}

void check_prefix_counts(TableReader& root, const std::vector<PrefixConfig>& prefixes) {
  for (IpFamily family : {IpFamily::kV4, IpFamily::kV6}) {
    const auto count = std::count_if(prefixes.begin(), prefixes.end(),
                                     [family](const auto& p) { return p.prefix.family == family; });
    if (count > EDGESHED_MAX_PREFIXES) {
      root.invalid("prefix", std::to_string(count) + (family == IpFamily::kV4 ? " IPv4" : " IPv6") +
                                 " prefixes: at most " + std::to_string(EDGESHED_MAX_PREFIXES) +
                                 " per address family");
    }
  }
}

struct LevelKeys {
  std::optional<TableReader> elevated;
  std::optional<TableReader> high;
  std::optional<TableReader> critical;

  std::optional<TableReader>& of(law::Level level) {
    return level == law::Level::kElevated ? elevated : level == law::Level::kHigh ? high : critical;
  }
};

void parse_levels(TableReader& reader, law::LevelMachineConfig& levels) {
  reader.integer("enter_after", levels.enter_after, 1, 100);
  reader.integer("critical_enter_after", levels.critical_enter_after, 1, 100);
  reader.duration("exit_after", levels.exit_after, nanoseconds(0), minutes(10),
                  /*zero_allowed=*/true);

  LevelKeys keys;
  bool thresholds_valid = true;  // relations are checked only between valid values
  for (law::Level level : {law::Level::kElevated, law::Level::kHigh, law::Level::kCritical}) {
    const std::string name(law::to_string(level));
    const toml::table* table = reader.table(name);
    if (table == nullptr) continue;
    std::optional<TableReader>& level_reader = keys.of(level);
    level_reader.emplace(reader.errors(), *table, reader.path_of(name));
    law::LevelThreshold& threshold = level == law::Level::kElevated ? levels.elevated
                                     : level == law::Level::kHigh   ? levels.high
                                                                    : levels.critical;
    if (!level_reader->number("enter", threshold.enter, 0.0, 100.0, Bounds::kOpenMin)) {
      thresholds_valid = thresholds_valid && !table->contains("enter");
    }
    if (!level_reader->number("exit", threshold.exit, 0.0, 100.0, Bounds::kOpenMin)) {
      thresholds_valid = thresholds_valid && !table->contains("exit");
    }
    level_reader->reject_unknown_keys();
  }
  reader.reject_unknown_keys();
  if (!thresholds_valid) return;

  // Reports a broken relation at the key the user wrote (the default being
  // the other side), preferring `key` when both were written.
  auto report = [&](law::Level level, std::string_view key, const std::string& problem,
                    law::Level other_level, std::string_view other_key,
                    const std::string& other_problem) {
    std::optional<TableReader>& first = keys.of(level);
    std::optional<TableReader>& second = keys.of(other_level);
    if (first && first->source_table().contains(key)) {
      first->invalid(key, problem);
    } else if (second && second->source_table().contains(other_key)) {
      second->invalid(other_key, other_problem);
    }
  };
  auto path = [&](law::Level level, std::string_view key) {
    return reader.path_of(std::string(law::to_string(level)) + "." + std::string(key));
  };
  const std::array<law::Level, 3> ordered = {law::Level::kElevated, law::Level::kHigh,
                                             law::Level::kCritical};
  for (law::Level level : ordered) {
    const law::LevelThreshold& t = levels.threshold(level);
    if (!(t.exit < t.enter)) {
      report(level, "exit",
             "must be < " + path(level, "enter") + " (" + format_number(t.enter) + ")", level,
             "enter", "must be > " + path(level, "exit") + " (" + format_number(t.exit) + ")");
    }
  }
  for (std::size_t i = 1; i < ordered.size(); ++i) {
    const law::Level lower = ordered[i - 1];
    const law::Level upper = ordered[i];
    const double lower_enter = levels.threshold(lower).enter;
    const double upper_enter = levels.threshold(upper).enter;
    if (!(upper_enter > lower_enter)) {
      report(upper, "enter",
             "must be > " + path(lower, "enter") + " (" + format_number(lower_enter) + ")", lower,
             "enter",
             "must be < " + path(upper, "enter") + " (" + format_number(upper_enter) + ")");
    }
  }
}

// One [policy.<level>.<class>] table. Returns false when invalid.
bool parse_policy_rule(TableReader& reader, law::PolicyRule& rule) {
  law::PolicyRule parsed;
  reader.require("action");
  bool valid = reader.choice("action", parsed.action,
                             {{"admit", law::PolicyAction::kAdmit},
                              {"fraction", law::PolicyAction::kFraction},
                              {"cap", law::PolicyAction::kCap},
                              {"shed", law::PolicyAction::kShed}});
  const bool is_fraction = parsed.action == law::PolicyAction::kFraction;
  const bool is_cap = parsed.action == law::PolicyAction::kCap;
  const bool is_shed = parsed.action == law::PolicyAction::kShed;
  auto only_with = [&](std::string_view key, bool allowed, const std::string& what) {
    reader.allow(key);
    if (!allowed && reader.source_table().contains(key)) {
      reader.invalid(key, "only valid with " + what);
      valid = false;
      return false;
    }
    return true;
  };

  if (only_with("fraction", is_fraction, "action = \"fraction\"")) {
    if (is_fraction && reader.require("fraction")) valid = false;
    if (!reader.number("fraction", parsed.fraction, 0.0, 1.0, Bounds::kClosed)) {
      valid = valid && !reader.source_table().contains("fraction");
    }
  }
  if (only_with("cap", is_cap, "action = \"cap\"")) {
    uint32_t cap = 0;
    if (reader.integer("cap", cap, 1, kMaxConnections)) {
      parsed.fixed_cap = cap;
    } else if (reader.source_table().contains("cap")) {
      valid = false;
    }
  }
  const std::string not_shed = R"(action = "admit", "fraction" or "cap")";
  if (only_with("tokens_per_sec", !is_shed, not_shed)) {
    if (!reader.integer("tokens_per_sec", parsed.tokens_per_sec, 1, kMaxRate)) {
      valid = valid && !reader.source_table().contains("tokens_per_sec");
    }
  }
  if (only_with("burst", !is_shed, not_shed)) {
    if (reader.integer("burst", parsed.burst, 1, kMaxRate)) {
      if (!reader.source_table().contains("tokens_per_sec")) {
        reader.invalid("burst", "only valid with tokens_per_sec");
        valid = false;
      }
    } else if (reader.source_table().contains("burst")) {
      valid = false;
    } else if (parsed.tokens_per_sec != law::kUnlimited) {
      parsed.burst = parsed.tokens_per_sec;  // one second's worth
    }
  }
  reader.reject_unknown_keys();
  if (valid) rule = parsed;
  return valid;
}

// Readers of the [policy.<level>.<class>] tables, kept for the critical floor check.
using PolicyReaders = std::vector<std::pair<law::Level, TableReader>>;

void parse_policy(TableReader& reader, law::PolicyTable& policy, PolicyReaders& critical_rules) {
  for (law::Level level : law::kAllLevels) {
    const std::string level_name(law::to_string(level));
    const toml::table* level_table = reader.table(level_name);
    if (level_table == nullptr) continue;
    TableReader level_reader(reader.errors(), *level_table, reader.path_of(level_name));
    for (const auto& [class_name, traffic_class] : kClassNames) {
      const toml::table* rule_table = level_reader.table(class_name);
      if (rule_table == nullptr) continue;
      TableReader rule_reader(reader.errors(), *rule_table, level_reader.path_of(class_name));
      const bool valid = parse_policy_rule(rule_reader, policy.at(level, traffic_class));
      if (valid && traffic_class == law::TrafficClass::kCritical) {
        critical_rules.emplace_back(level, rule_reader);
      }
    }
    level_reader.reject_unknown_keys();
  }
  reader.reject_unknown_keys();
}

// Critical traffic keeps its floor whatever the policy says. The law clamps
// at run time anyway; a config that asks for less is rejected rather than
// silently corrected, so the operator learns the rule from the error.
void check_critical_floor(const law::PolicyTable& policy, PolicyReaders& critical_rules,
                          const law::CriticalFloor& floor) {
  const std::string fraction_floor =
      "critical.floor_fraction (" + format_number(floor.fraction) + ")";
  const std::string inflight_floor =
      "critical.floor_inflight (" + std::to_string(floor.inflight) + ")";
  for (auto& [level, reader] : critical_rules) {
    const law::PolicyRule& rule = policy.at(level, law::TrafficClass::kCritical);
    if (rule.action == law::PolicyAction::kShed && floor.fraction > 0.0) {
      reader.invalid("action", "would shed critical traffic below its guaranteed " +
                                   fraction_floor + "; lower the floor to allow it");
    } else if (rule.action == law::PolicyAction::kFraction && rule.fraction < floor.fraction) {
      reader.invalid("fraction", "is below the guaranteed " + fraction_floor +
                                     " of critical traffic; lower the floor to allow it");
    } else if (rule.action == law::PolicyAction::kCap && rule.fixed_cap &&
               *rule.fixed_cap < floor.inflight) {
      reader.invalid("cap", "is below the guaranteed " + inflight_floor +
                                " of critical traffic; lower the floor to allow it");
    }
  }
}

void parse_critical(TableReader& reader, law::CriticalFloor& floor, uint32_t& cap) {
  reader.number("floor_fraction", floor.fraction, 0.0, 1.0, Bounds::kClosed);
  reader.integer("floor_inflight", floor.inflight, 0, kMaxConnections);
  if (reader.integer("cap", cap, 1, kMaxConnections) && cap < floor.inflight) {
    reader.invalid("cap",
                   "must be >= critical.floor_inflight (" + std::to_string(floor.inflight) + ")");
  }
  reader.reject_unknown_keys();
}

enum AlgorithmMask : unsigned {
  kStaticOnly = 1u << 0,
  kAimdOnly = 1u << 1,
  kGradientOnly = 1u << 2,
  kCapacityOnly = 1u << 3,
};

void parse_limit(TableReader& reader, law::LimitConfig& limit, std::string& latency_signal) {
  reader.choice("algorithm", limit.algorithm,
                {{"static", law::LimitAlgorithmKind::kStatic},
                 {"aimd", law::LimitAlgorithmKind::kAimd},
                 {"gradient", law::LimitAlgorithmKind::kGradient},
                 {"capacity", law::LimitAlgorithmKind::kCapacity}});
  const unsigned chosen = limit.algorithm == law::LimitAlgorithmKind::kStatic     ? kStaticOnly
                          : limit.algorithm == law::LimitAlgorithmKind::kAimd     ? kAimdOnly
                          : limit.algorithm == law::LimitAlgorithmKind::kCapacity ? kCapacityOnly
                                                                                  : kGradientOnly;
  // Keys of another algorithm than the chosen one are errors: they would do nothing.
  const std::initializer_list<std::pair<std::string_view, unsigned>> keys = {
      {"initial", kStaticOnly | kAimdOnly | kGradientOnly | kCapacityOnly},
      {"latency_signal", kStaticOnly | kAimdOnly | kGradientOnly | kCapacityOnly},
      {"min", kAimdOnly | kGradientOnly | kCapacityOnly},
      {"max", kAimdOnly | kGradientOnly | kCapacityOnly},
      {"probe_factor", kCapacityOnly},
      {"probe_time", kCapacityOnly},
      {"floor_ttl", kCapacityOnly},
      {"latency_threshold", kAimdOnly},
      {"increase", kAimdOnly},
      {"backoff", kAimdOnly},
      {"tolerance", kGradientOnly | kCapacityOnly},
      {"smoothing", kGradientOnly | kCapacityOnly},
      {"baseline_smoothing", kGradientOnly},
      {"baseline_rise_after", kGradientOnly},
      {"max_increase_per_tick", kGradientOnly | kCapacityOnly},
      {"max_decrease_per_tick", kGradientOnly | kCapacityOnly},
  };
  reader.string("latency_signal", latency_signal);
  bool valid = true;
  for (const auto& [key, algorithms] : keys) {
    reader.allow(key);
    if ((algorithms & chosen) == 0 && reader.source_table().contains(key)) {
      std::string names;
      for (auto [bit, name] :
           {std::pair{kStaticOnly, "static"}, std::pair{kAimdOnly, "aimd"},
            std::pair{kGradientOnly, "gradient"}, std::pair{kCapacityOnly, "capacity"}}) {
        if ((algorithms & bit) == 0) continue;
        names += names.empty() ? "" : " or ";
        names += "\"" + std::string(name) + "\"";
      }
      reader.invalid(key, "only valid with algorithm = " + names);
      valid = false;
    }
  }
  if (!valid) {
    reader.reject_unknown_keys();
    return;
  }

  auto read_bounds = [&](uint32_t& initial, uint32_t& min, uint32_t& max) {
    reader.integer("initial", initial, 1, kMaxConnections);
    reader.integer("min", min, 1, kMaxConnections);
    reader.integer("max", max, 1, kMaxConnections);
    auto set = [&](std::string_view key) { return reader.source_table().contains(key); };
    if (min > max) {
      if (set("min")) {
        reader.invalid("min", "must be <= limit.max (" + std::to_string(max) + ")");
      } else {
        reader.invalid("max", "must be >= limit.min (" + std::to_string(min) + ")");
      }
    } else if (initial < min || initial > max) {
      const std::string range = "must be in [limit.min, limit.max] = [" + std::to_string(min) +
                                ", " + std::to_string(max) + "]";
      if (set("initial")) {
        reader.invalid("initial", range);
      } else {
        reader.invalid(initial < min ? "min" : "max",
                       std::string("must be ") + (initial < min ? "<= " : ">= ") +
                           "limit.initial (" + std::to_string(initial) + ")");
      }
    }
  };

  switch (limit.algorithm) {
    case law::LimitAlgorithmKind::kStatic:
      reader.integer("initial", limit.static_limit.limit, 1, kMaxConnections);
      break;
    case law::LimitAlgorithmKind::kAimd: {
      law::AimdLimitConfig& aimd = limit.aimd;
      read_bounds(aimd.initial, aimd.min, aimd.max);
      nanoseconds threshold = std::chrono::duration_cast<nanoseconds>(
          std::chrono::duration<double>(aimd.latency_threshold_seconds));
      if (reader.duration("latency_threshold", threshold, milliseconds(1), minutes(1))) {
        aimd.latency_threshold_seconds = std::chrono::duration<double>(threshold).count();
      }
      reader.integer("increase", aimd.increase, 1, 1000);
      reader.number("backoff", aimd.backoff, 0.0, 1.0, Bounds::kOpen);
      break;
    }
    case law::LimitAlgorithmKind::kGradient: {
      law::GradientLimitConfig& gradient = limit.gradient;
      read_bounds(gradient.initial, gradient.min, gradient.max);
      reader.number("tolerance", gradient.tolerance, 0.0, 1.0, Bounds::kOpenMin);
      reader.number("smoothing", gradient.smoothing, 0.0, 1.0, Bounds::kOpenMin);
      reader.number("baseline_smoothing", gradient.baseline_smoothing, 0.0, 1.0, Bounds::kOpenMin);
      reader.duration("baseline_rise_after", gradient.baseline_rise_after, nanoseconds(0),
                      minutes(10), /*zero_allowed=*/true);
      reader.number("max_increase_per_tick", gradient.max_increase_per_tick, 1.0, 10.0,
                    Bounds::kOpenMin);
      reader.number("max_decrease_per_tick", gradient.max_decrease_per_tick, 0.0, 1.0,
                    Bounds::kOpen);
      break;
    }
    case law::LimitAlgorithmKind::kCapacity: {
      law::CapacityLimitConfig& capacity = limit.capacity;
      read_bounds(capacity.initial, capacity.min, capacity.max);
      reader.number("tolerance", capacity.tolerance, 0.0, 1.0, Bounds::kOpenMin);
      reader.number("smoothing", capacity.smoothing, 0.0, 1.0, Bounds::kOpenMin);
      reader.number("max_increase_per_tick", capacity.max_increase_per_tick, 1.0, 10.0,
                    Bounds::kOpenMin);
      reader.number("max_decrease_per_tick", capacity.max_decrease_per_tick, 0.0, 1.0,
                    Bounds::kOpen);
      reader.number("probe_factor", capacity.probe_factor, 0.0, 1.0, Bounds::kOpen);
      reader.duration("probe_time", capacity.probe_time, milliseconds(100), minutes(1));
      reader.duration("floor_ttl", capacity.floor_ttl, seconds(1), std::chrono::hours(24));
      break;
    }
  }
  reader.reject_unknown_keys();
}

bool valid_signal_name(const std::string& name) {
  return !name.empty() && name.size() <= kMaxSignalName &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '-' || c == '.';
         });
}

void parse_signal(TableReader& reader, std::string_view source_name, const DaemonConfig& daemon,
                  std::vector<SignalConfig>& signals, std::map<std::string, std::string>& seen) {
  SignalConfig signal;
  reader.require("name");
  if (reader.string("name", signal.name)) {
    if (!valid_signal_name(signal.name)) {
      reader.invalid("name", "must be 1-64 characters of letters, digits, '_', '-' or '.'");
    } else if (auto [it, inserted] = seen.emplace(signal.name, reader.path()); !inserted) {
      reader.invalid("name", "duplicate of " + it->second);
    }
  }
  reader.require("kind");
  const bool kind_valid = reader.choice("kind", signal.kind,
                                        {{"inflight", SignalKind::kInflight},
                                         {"accept_queue", SignalKind::kAcceptQueue},
                                         {"dataplane", SignalKind::kDataplane},
                                         {"netstat", SignalKind::kNetstat},
                                         {"psi", SignalKind::kPsi},
                                         {"prometheus", SignalKind::kPrometheus},
                                         {"probe", SignalKind::kProbe},
                                         {"synthetic", SignalKind::kSynthetic},
                                         {"file", SignalKind::kFile},
                                         {"kernel_latency", SignalKind::kKernelLatency},
                                         {"limit", SignalKind::kLimit}});
  reader.require("target");
  reader.number("target", signal.target, 0.0, kInfinity, Bounds::kOpenMin);
  reader.boolean("hard_safety", signal.hard_safety);
  if (reader.duration("stale_after", signal.stale_after, milliseconds(10), std::chrono::hours(1)) &&
      signal.stale_after < daemon.tick) {
    reader.invalid("stale_after", "must be >= daemon.tick (" + format_duration(daemon.tick) +
                                      "): a signal is read once per tick");
  }

  // Kind-specific keys go to params; the kinds known here are checked here.
  if (kind_valid && signal.kind == SignalKind::kFile) {
    std::string path;
    reader.require("path");
    if (reader.string("path", path) && path.empty()) reader.invalid("path", "must not be empty");
  } else if (kind_valid && signal.kind == SignalKind::kSynthetic) {
    double value = 0.0;
    reader.number("value", value, -kInfinity, kInfinity, Bounds::kOpen);
  }
  const bool open_kind =
      kind_valid && signal.kind != SignalKind::kFile && signal.kind != SignalKind::kSynthetic;
  for (const auto& [key, node] : reader.source_table()) {
    static const std::set<std::string_view> kCommon = {"name", "kind", "target", "hard_safety",
                                                       "stale_after"};
    if (kCommon.contains(key.str())) continue;
    if (open_kind) reader.allow(key.str());
    signal.params.insert(key, node);
    signal.param_positions.emplace(key.str(), key.source().begin);
  }
  signal.source_name = source_name;
  signal.path = reader.path();
  signals.push_back(std::move(signal));
}

// What a config that names no [[signal]] gets: how full the adaptive limit
// is, which needs nothing from the service and rises whenever the limit
// sheds. A port's latency objective is a signal in any config.
void add_default_signals(Config& config, std::string_view source_name) {
  auto synthesized = [&](std::string name, SignalKind kind, double target, std::string path) {
    SignalConfig signal;
    signal.name = std::move(name);
    signal.kind = kind;
    signal.target = target;
    signal.source_name = source_name;
    signal.path = std::move(path);
    return signal;
  };
  if (config.signals.empty()) {
    config.default_signals = true;
    config.signals.push_back(synthesized("limit", SignalKind::kLimit, 1.0, "(default signal)"));
  }
  for (size_t i = 0; i < config.ports.size(); ++i) {
    const PortConfig& port = config.ports[i];
    if (!port.latency_objective) continue;
    SignalConfig signal = synthesized(
        "latency_objective_" + std::to_string(port.port), SignalKind::kKernelLatency,
        std::chrono::duration<double>(*port.latency_objective).count(),
        "port[" + std::to_string(i) + "].latency_objective");
    signal.params.insert("measure", "response");
    signal.params.insert("statistic", "p99");
    signal.params.insert("port", static_cast<int64_t>(port.port));
    config.signals.push_back(std::move(signal));
  }
}

// Parses the whole document; errors are collected, not fatal.
Config parse_document(const toml::table& document, std::string_view source_name,
                      ConfigErrors& errors) {
  Config config;
  TableReader root(errors, document, "");

  if (const toml::table* table = root.table("daemon")) {
    TableReader reader(errors, *table, "daemon");
    parse_daemon(reader, config.daemon);
  }
  if (const toml::table* table = root.table("dataplane")) {
    TableReader reader(errors, *table, "dataplane");
    parse_dataplane(reader, config.dataplane);
  }
  if (const toml::table* table = root.table("metrics")) {
    TableReader reader(errors, *table, "metrics");
    parse_metrics(reader, config.metrics);
  }
  {
    std::map<std::string, std::string> seen;
    for_each_entry(root, "interface",
                   [&](TableReader& reader) { parse_interface(reader, config.interfaces, seen); });
  }
  {
    std::map<uint16_t, std::string> seen;
    for_each_entry(root, "port",
                   [&](TableReader& reader) { parse_port(reader, config.ports, seen); });
  }
  {
    std::map<std::string, std::string> seen;
    for_each_entry(root, "prefix",
                   [&](TableReader& reader) { parse_prefix(reader, config.prefixes, seen); });
    check_prefix_counts(root, config.prefixes);
  }
  if (const toml::table* table = root.table("levels")) {
    TableReader reader(errors, *table, "levels");
    parse_levels(reader, config.levels);
  }
  if (const toml::table* table = root.table("critical")) {
    TableReader reader(errors, *table, "critical");
    parse_critical(reader, config.critical_floor, config.critical_cap);
  }
  if (const toml::table* table = root.table("limit")) {
    TableReader reader(errors, *table, "limit");
    parse_limit(reader, config.limit, config.latency_signal);
  }
  // After [critical]: its cap is the default of policy.critical.critical.
  // After [limit]: the capacity limit is in force below high too.
  config.policy = law::default_policy_table(
      config.critical_cap, config.limit.algorithm == law::LimitAlgorithmKind::kCapacity);
  if (const toml::table* table = root.table("policy")) {
    TableReader reader(errors, *table, "policy");
    PolicyReaders critical_rules;
    parse_policy(reader, config.policy, critical_rules);
    check_critical_floor(config.policy, critical_rules, config.critical_floor);
  }
  {
    std::map<std::string, std::string> seen;
    for_each_entry(root, "signal", [&](TableReader& reader) {
      parse_signal(reader, source_name, config.daemon, config.signals, seen);
    });
  }
  add_default_signals(config, source_name);
  if (!config.latency_signal.empty()) {
    bool found = std::any_of(config.signals.begin(), config.signals.end(),
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

Result<Config> parse_config(std::string_view text, std::string_view source_name) {
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
  Config config = parse_document(document, source_name, errors);
  if (!errors.empty()) return make_error(errors.joined());
  return config;
}

Result<Config> load_config(const std::string& path) {
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
  return parse_config(text.str(), path);
}

}  // namespace edgeshed::config
