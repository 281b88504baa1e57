// The single-table sections: [daemon], [metrics], [agent] and [dataplane].
#include <algorithm>
#include <array>
#include <cctype>
#include <string>
#include <string_view>

#include "common/names.h"
#include "config/duration.h"
#include "config/parse_sections.h"

namespace edgeshed::config::sections {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;

namespace {

constexpr int32_t kMinNice = -20;  // setpriority(2)'s range
constexpr int32_t kMaxNice = 19;

// listen = "ADDRESS:PORT" (IPv6 in brackets) or "off"; an address literal,
// never a name. `example_port` is shown in the error. The key is spelled out
// in the reader calls for ExampleDocumentsEveryKeyTheCodeReads to find.
void parse_listen(TableReader& reader, std::string_view example_port, ListenConfig& config) {
  std::string listen;
  if (!reader.string("listen", listen)) return;
  if (listen == "off") {
    config.enabled = false;
    return;
  }
  auto colon = listen.rfind(':');
  std::string host = colon == std::string::npos ? "" : listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  uint32_t number = 0;
  bool port_ok = colon != std::string::npos && colon + 1 < listen.size();
  for (size_t i = colon + 1; port_ok && i < listen.size(); ++i) {
    port_ok = std::isdigit(static_cast<unsigned char>(listen[i])) && number < 65536;
    number = number * 10 + static_cast<uint32_t>(listen[i] - '0');
  }
  auto literal = parse_ip_prefix(host + (host.find(':') != std::string::npos ? "/128" : "/32"));
  if (!port_ok || number == 0 || number > 65535 || !literal) {
    const std::string p(example_port);
    reader.invalid("listen", R"(must be "ADDRESS:PORT" (e.g. "127.0.0.1:)" + p + R"(", "[::1]:)" +
                                 p + R"("), port 1..65535, or "off")");
    return;
  }
  config.enabled = true;
  config.address = host;
  config.port = static_cast<uint16_t>(number);
}

}  // namespace

void parse_daemon(TableReader& reader, DaemonConfig& daemon) {
  reader.duration("tick", daemon.tick, milliseconds(10), seconds(10));
  reader.choice("on_exit", daemon.on_exit, names::kOnExit);
  const bool heartbeat_set = reader.duration("heartbeat_timeout", daemon.heartbeat_timeout,
                                             milliseconds(10), std::chrono::hours(1),
                                             /*zero_allowed=*/true);
  reader.choice("all_stale", daemon.all_stale, names::kAllStale);
  std::size_t log_level = 0;
  if (reader.choice("log_level", log_level, names::kLogLevels)) {
    daemon.log_level = names::kLogLevels[log_level];
  }
  reader.signed_integer("nice", daemon.nice, kMinNice, kMaxNice);
  if (reader.string("run_dir", daemon.run_dir) &&
      (daemon.run_dir.empty() || daemon.run_dir.front() != '/')) {
    reader.invalid("run_dir", "must be an absolute path");
  }
  if (reader.string("state_dir", daemon.state_dir) &&
      (daemon.state_dir.empty() || daemon.state_dir.front() != '/')) {
    reader.invalid("state_dir", "must be an absolute path");
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

void parse_metrics(TableReader& reader, MetricsConfig& metrics) {
  parse_listen(reader, "9477", metrics.listen);
  // From elevated up: a service that is never ready is no rule.
  reader.choice("not_ready_from", metrics.not_ready_from, names::kLevels, 1);
  reader.reject_unknown_keys();
}

void parse_agent(TableReader& reader, AgentConfig& agent) {
  parse_listen(reader, "9478", agent.listen);
  reader.boolean("send_maxconn", agent.reply.send_maxconn);
  if (const toml::table* table = reader.table("weights")) {
    TableReader weights(reader.errors(), *table, reader.path_of("weights"));
    std::array<bool, law::kNumLevels> valid{};
    for (law::Level level : law::kAllLevels) {
      const std::string name(names::name_of(level));
      valid[law::index_of(level)] =
          weights.integer(name, agent.reply.weight_percent[law::index_of(level)], 0, 100) ||
          !table->contains(name);
    }
    weights.reject_unknown_keys();
    // Steering away is the point: a level never gets more weight than the one below it.
    for (std::size_t i = 1; i < law::kNumLevels; ++i) {
      const uint32_t lower = agent.reply.weight_percent[i - 1];
      const uint32_t upper = agent.reply.weight_percent[i];
      if (!valid[i - 1] || !valid[i] || upper <= lower) continue;
      const std::string lower_name(names::name_of(law::kAllLevels[i - 1]));
      const std::string upper_name(names::name_of(law::kAllLevels[i]));
      if (table->contains(upper_name)) {
        weights.invalid(upper_name, "must be <= " + weights.path_of(lower_name) + " (" +
                                        std::to_string(lower) + ")");
      } else {
        weights.invalid(lower_name, "must be >= " + weights.path_of(upper_name) + " (" +
                                        std::to_string(upper) + ")");
      }
    }
  }
  reader.reject_unknown_keys();
}

namespace {

// [dataplane] destinations: prefixes, each once, within the tries' size
// (the host's own local routes share it).
void parse_destinations(TableReader& reader, std::vector<IpPrefix>& out) {
  std::vector<std::string> texts;
  if (!reader.strings("destinations", texts)) return;
  std::vector<IpPrefix> prefixes;
  for (const auto& text : texts) {
    auto parsed = parse_ip_prefix(text);
    if (!parsed) {
      reader.invalid("destinations", "\"" + text + "\": " + parsed.error().message);
      return;
    }
    if (std::find(prefixes.begin(), prefixes.end(), *parsed) != prefixes.end()) {
      reader.invalid("destinations", "\"" + text + "\" is listed twice");
      return;
    }
    prefixes.push_back(*parsed);
  }
  if (prefixes.size() > EDGESHED_MAX_DESTINATIONS / 2) {
    reader.invalid("destinations", "at most " + std::to_string(EDGESHED_MAX_DESTINATIONS / 2) +
                                       " prefixes (the host's own addresses share the table)");
    return;
  }
  out = std::move(prefixes);
}

}  // namespace

void parse_dataplane(TableReader& reader, DataplaneConfig& dataplane) {
  reader.choice("mode", dataplane.mode, names::kModes);
  reader.choice("action", dataplane.action, names::kActions);
  reader.choice("draw", dataplane.draw, names::kDraws);
  reader.duration("salt_rotation", dataplane.salt_rotation, seconds(1), std::chrono::hours(24));
  reader.integer("rst_per_sec_per_cpu", dataplane.rst_per_sec_per_cpu, 0, 10'000'000);
  reader.integer("rst_reflect_per_sec", dataplane.rst_reflect.per_sec, 0, 10'000'000);
  reader.integer("rst_reflect_burst", dataplane.rst_reflect.burst, 1, 10'000'000);
  reader.integer("rst_reflect_prefix_v4", dataplane.rst_reflect.prefix_v4, 1, 32);
  reader.integer("rst_reflect_prefix_v6", dataplane.rst_reflect.prefix_v6, 1, 128);
  reader.integer("rst_reflect_per_conn", dataplane.rst_reflect.per_conn, 0, 65535);
  reader.integer("hash_prefix_v4", dataplane.hash_prefix_v4, 1, 32);
  reader.integer("hash_prefix_v6", dataplane.hash_prefix_v6, 1, 128);
  reader.integer("events_per_sec_per_cpu", dataplane.events_per_sec_per_cpu, 0, 1'000'000);
  reader.integer("event_sample", dataplane.event_sample, 1, 1'000'000);
  parse_destinations(reader, dataplane.destinations);
  reader.reject_unknown_keys();
}

}  // namespace edgeshed::config::sections
