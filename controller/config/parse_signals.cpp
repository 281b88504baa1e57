// [[signal]] entries and the signals a config gets without asking.
#include <algorithm>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/duration.h"
#include "config/parse_sections.h"
#include "config/signal_table.h"

namespace edgeshed::config::sections {

using std::chrono::milliseconds;

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr std::size_t kMaxSignalName = 64;

bool valid_signal_name(const std::string& name) {
  return !name.empty() && name.size() <= kMaxSignalName &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '-' || c == '.';
         });
}

}  // namespace

void parse_signal(TableReader& reader, std::string_view source_name, const DaemonConfig& daemon,
                  SignalKinds kinds, std::vector<SignalConfig>& signals,
                  std::map<std::string, std::string>& seen) {
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
  std::vector<std::string_view> names;
  for (const SignalKindRule& k : kinds) names.push_back(k.name);
  const std::optional<std::size_t> kind = reader.choice_index("kind", names);
  if (kind) signal.kind = kinds[*kind].name;
  reader.require("target");
  reader.number("target", signal.target, 0.0, kInfinity, Bounds::kOpenMin);
  reader.boolean("hard_safety", signal.hard_safety);
  if (reader.duration("stale_after", signal.stale_after, milliseconds(10), std::chrono::hours(1)) &&
      signal.stale_after < daemon.tick) {
    reader.invalid("stale_after", "must be >= daemon.tick (" + format_duration(daemon.tick) +
                                      "): a signal is read once per tick");
  }

  // Kind-specific keys go to params; the kind checks them
  // (signals/signal_params.h).
  SignalTable params;
  for (const auto& [key, node] : reader.source_table()) {
    static const std::set<std::string_view> kCommon = {"name", "kind", "target", "hard_safety",
                                                       "stale_after"};
    if (kCommon.contains(key.str())) continue;
    if (kind) reader.allow(key.str());
    params.keys.insert(key, node);
    params.positions.emplace(key.str(), key.source().begin);
  }
  if (!params.keys.empty()) signal.params = std::make_shared<const SignalTable>(std::move(params));
  signal.source_name = source_name;
  signal.path = reader.path();
  signals.push_back(std::move(signal));
}

void add_default_signals(Config& config, std::string_view source_name) {
  auto synthesized = [&](std::string name, std::string kind, double target, std::string path) {
    SignalConfig signal;
    signal.name = std::move(name);
    signal.kind = std::move(kind);
    signal.target = target;
    signal.source_name = source_name;
    signal.path = std::move(path);
    return signal;
  };
  if (config.signals.empty()) {
    config.default_signals = true;
    config.signals.push_back(synthesized("limit", "limit", 1.0, "(default signal)"));
  }
  for (size_t i = 0; i < config.ports.size(); ++i) {
    const PortConfig& port = config.ports[i];
    if (!port.latency_objective) continue;
    SignalConfig signal =
        synthesized("latency_objective_" + std::to_string(port.port), "kernel_latency",
                    std::chrono::duration<double>(*port.latency_objective).count(),
                    "port[" + std::to_string(i) + "].latency_objective");
    signal.params = make_signal_table(toml::table{
        {"measure", "response"}, {"statistic", "p99"}, {"port", static_cast<int64_t>(port.port)}});
    config.signals.push_back(std::move(signal));
  }
}

}  // namespace edgeshed::config::sections
