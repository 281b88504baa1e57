#include "cli/status_summary.h"

#include <fmt/format.h>

#include <sstream>

#include "cli/interface_status.h"
#include "cli/status_text.h"
#include "common/names.h"
#include "common/stats.h"
#include "config/config.h"
#include "ipc/state.h"

namespace edgeshed {
namespace {

using Json = nlohmann::ordered_json;

void add(std::vector<std::string>& out, const std::string& text, const std::string& indent = "") {
  for (auto& line : wrap(text, kSummaryWidth, indent, indent + "    "))
    out.push_back(std::move(line));
}

// "p99 23.1 ms (p50 12.0 ms) at 226/s": the protected ports together.
std::string latency_text(const ipc::State& d) {
  if (!d.latency) return "";
  for (const auto& p : *d.latency) {
    if (p.port != "all" || !p.response.figures || !p.response.figures->p99_ms) continue;
    const auto& f = *p.response.figures;
    std::string out = fmt::format("response time p99 {:.1f} ms", *f.p99_ms);
    if (f.p50_ms) out += fmt::format(" (p50 {:.1f} ms)", *f.p50_ms);
    if (f.per_sec) out += fmt::format(" at {:.0f}/s", *f.per_sec);
    return out + ", measured in the kernel";
  }
  return "";
}

std::string limit_text(const ipc::State& d) {
  if (d.adaptive_limit_open) {
    return fmt::format("limit {} in service: open, binds nowhere until a queue is seen",
                       d.adaptive_limit);
  }
  std::string out =
      fmt::format("limit {} in service, found from the response time", d.adaptive_limit);
  if (d.learnt) out += fmt::format(" (no-queue {:.1f} ms)", d.learnt->floor_ms);
  return out;
}

void daemon_summary(const Json& json, const Json& health, std::vector<std::string>& out) {
  const std::string state = health.value("state", "");
  const std::string why = health.value("why", "");
  if (json.is_null()) {
    add(out,
        "daemon: not running" +
            (!why.empty() && state != "not_running" ? ": " + why
                                                    : ", it stopped cleanly or never started") +
            " (the policy below is the last one published)");
    return;
  }
  auto parsed = ipc::parse_state(json);
  if (!parsed) {
    add(out, "daemon: its state file is unreadable: " + parsed.error().message);
    return;
  }
  const ipc::State& d = *parsed;
  const int64_t held_s = (d.monotonic_ms - d.level_since_ms) / 1000;
  std::string drivers;
  for (const auto& n : d.drivers) drivers += (drivers.empty() ? "" : ", ") + n;
  std::string head = state.empty() || state == "running"
                         ? fmt::format("daemon: running, pid {}", d.pid)
                         : fmt::format("daemon: {}: {}", upper(state), why);
  add(out, head);
  add(out,
      fmt::format("level {}{} for {} s, pressure {}{}; mode {}", d.level,
                  d.level_pinned ? " (pinned)" : "", held_s,
                  d.pressure ? fmt::format("{:.2f}", *d.pressure) : std::string("-"),
                  drivers.empty() ? "" : " from " + drivers, d.mode),
      "  ");
  add(out, limit_text(d), "  ");
  if (auto latency = latency_text(d); !latency.empty()) add(out, latency, "  ");
  if (d.fail_open) {
    add(out, "FAIL-OPEN: every signal is stale and all_stale = fail_open: admitting everything",
        "  ");
  } else if (d.all_stale) {
    add(out, "every signal is stale: holding the last level (all_stale = hold)", "  ");
  }
  for (const auto& s : d.signals) {
    if (!s.stale && s.error.empty()) continue;  // the healthy ones: --verbose
    add(out,
        fmt::format("signal {} ({}): {}{}", s.name, s.kind, s.stale ? "STALE" : "",
                    s.error.empty() ? "" : (s.stale ? ", " : "") + ("error: " + s.error)),
        "  ");
  }
  if (!d.runtime_changes.empty()) {
    add(out, "operator changes: " + describe_changes(d.runtime_changes), "  ");
  }
}

// "cap 3.0, frac 1.0" from the rates; "would shed" in observe mode.
std::string shed_why(const ClassRates& r) {
  std::string out;
  auto part = [&out](const char* name, double v) {
    if (v > 0) out += fmt::format("{}{} {:.1f}", out.empty() ? "" : ", ", name, v);
  };
  part("cap", r.shed_cap);
  part("frac", r.shed_fraction);
  part("rate", r.shed_rate);
  if (out.empty() && r.would_shed > 0) out = fmt::format("would {:.1f}", r.would_shed);
  return out;
}

// A port's protocol, class and keep-alive where they are not a port's default.
std::string ports_text(const InterfaceStatus& j) {
  const config::PortConfig defaults;
  const std::string_view default_protocol = names::name_of(defaults.protocol);
  const std::string_view default_class = names::name_of(defaults.traffic_class);
  const std::string_view default_keepalive = names::name_of(names::kKeepAlive, defaults.keepalive);
  std::string ports;
  for (const auto& p : j.ports) {
    std::string protocols;
    for (const auto& proto : p.protocols) protocols += (protocols.empty() ? "" : "+") + proto;
    ports += (ports.empty() ? "" : ", ") + std::to_string(p.port);
    if (protocols != default_protocol) ports += "/" + protocols;
    if (p.traffic_class != default_class) ports += ":" + p.traffic_class;
    if (p.keepalive != default_keepalive) ports += " (keepalive " + p.keepalive + ")";
    if (p.netns) ports += " in " + *p.netns;
    if (p.timers) ports += " timed at its " + *p.timers;
  }
  return ports.empty() ? "nothing (no port protected)" : ports;
}

void interface_summary(const InterfaceStatus& j, std::vector<std::string>& out) {
  if (j.error) {
    add(out, j.iface + ": UNREADABLE: " + *j.error);
    return;
  }
  add(out, fmt::format("{}: hook {}, mode {}, action {}; protects {}", j.iface, j.hook, j.mode,
                       j.action, ports_text(j)));
  if (j.fail_open)
    add(out, "FAIL-OPEN: admitting everything: " + j.fail_open_reason.value_or("-"), "  ");
  if (j.fail_static_note) add(out, *j.fail_static_note, "  ");
  constexpr const char* kRow = "  {:<11}{:<22}{:>10}{:>11}{:>8}  {}";
  out.push_back(fmt::format(kRow, "class", "policy", "in service", "admitted/s", "shed/s", "why"));
  uint64_t rst_sent = 0, rst_capped = 0;
  for (size_t c = 0; c < j.classes.size(); ++c) {
    const ClassStatus& k = j.classes[c];
    rst_sent += k.counters[EDGESHED_CTR_RST_SENT];
    rst_capped += k.counters[EDGESHED_CTR_RST_CAPPED];
    std::string admitted = "-", shed = "-", why;
    if (j.rates) {
      const ClassRates& r = j.rates->classes[c];
      admitted = fmt::format("{:.1f}", r.admitted);
      shed = fmt::format("{:.1f}", r.shed);
      why = shed_why(r);
    }
    const std::string cap = k.inflight_cap ? std::to_string(k.inflight_cap) : "-";
    std::string line = fmt::format(kRow, names::name_of(names::kClasses, c), describe_policy(k),
                                   std::to_string(k.inflight) + "/" + cap, admitted, shed, why);
    line.erase(line.find_last_not_of(' ') + 1);
    out.push_back(line.size() > kSummaryWidth ? line.substr(0, kSummaryWidth) : line);
  }
  uint64_t shed_total = 0, would_total = 0;
  for (const ClassStatus& k : j.classes) {
    shed_total += class_sheds(k.counters.values);
    would_total += class_would_sheds(k.counters.values);
  }
  add(out,
      fmt::format("since attach: shed {}, would-shed {}, RSTs sent {} (capped {}){}", shed_total,
                  would_total, rst_sent, rst_capped, j.rates ? "" : "; no rates: --interval 0"),
      "  ");
}

}  // namespace

std::vector<std::string> wrap(const std::string& text, size_t width,
                              const std::string& first_indent, const std::string& indent) {
  std::vector<std::string> out;
  std::istringstream words(text);
  std::string word, line = first_indent;
  bool empty = true;
  while (words >> word) {
    if (!empty && line.size() + 1 + word.size() > width) {
      out.push_back(line);
      line = indent;
      empty = true;
    }
    line += (empty ? "" : " ") + word;
    empty = false;
  }
  if (!empty) out.push_back(line);
  return out;
}

std::vector<std::string> status_summary(const Json& status) {
  std::vector<std::string> out;
  daemon_summary(status["daemon"], status.value("daemon_health", Json::object()), out);
  for (const auto& s : interfaces_of(status)) interface_summary(s, out);
  add(out, "(details: --verbose, or --json)");
  return out;
}

}  // namespace edgeshed
