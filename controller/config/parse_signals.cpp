// [[signal]] entries and the signals a config gets without asking.
#include <algorithm>
#include <limits>
#include <set>
#include <string>

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
  const bool kind_valid = reader.choice("kind", signal.kind, kSignalKindNames);
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
  SignalTable params;
  for (const auto& [key, node] : reader.source_table()) {
    static const std::set<std::string_view> kCommon = {"name", "kind", "target", "hard_safety",
                                                       "stale_after"};
    if (kCommon.contains(key.str())) continue;
    if (open_kind) reader.allow(key.str());
    params.keys.insert(key, node);
    params.positions.emplace(key.str(), key.source().begin);
  }
  if (!params.keys.empty()) signal.params = std::make_shared<const SignalTable>(std::move(params));
  signal.source_name = source_name;
  signal.path = reader.path();
  signals.push_back(std::move(signal));
}

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
    SignalConfig signal =
        synthesized("latency_objective_" + std::to_string(port.port), SignalKind::kKernelLatency,
                    std::chrono::duration<double>(*port.latency_objective).count(),
                    "port[" + std::to_string(i) + "].latency_objective");
    signal.params = make_signal_table(toml::table{
        {"measure", "response"}, {"statistic", "p99"}, {"port", static_cast<int64_t>(port.port)}});
    config.signals.push_back(std::move(signal));
  }
}

}  // namespace edgeshed::config::sections
