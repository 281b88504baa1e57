#include "cli/status_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <ctime>
#include <optional>
#include <string>
#include <vector>

#include "cli/interface_status.h"
#include "cli/status_text.h"
#include "common/names.h"
#include "common/stats.h"
#include "config/config.h"
#include "ipc/state.h"

// The status as text: what `edgeshed status` prints (status_lines()).
namespace edgeshed {

using Json = nlohmann::ordered_json;

std::string clock_time(int64_t unix_ms) {
  time_t t = static_cast<time_t>(unix_ms / 1000);
  tm local{};
  localtime_r(&t, &local);
  char buf[16];
  if (strftime(buf, sizeof(buf), "%H:%M:%S", &local) == 0) return "--:--:--";
  return buf;
}

std::string upper(std::string s) {
  for (auto& c : s)
    c = c == '_' ? '-' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

namespace {

std::string rate(double per_sec) { return fmt::format("{:.1f}", per_sec); }

}  // namespace

std::string describe_policy(const ClassStatus& k) {
  const double admit = 1.0 - k.shed_fraction;
  std::string out;
  if (admit <= 0) {
    out = "shed all";
  } else if (admit < 1) {
    out = fmt::format("admit {:.0f}%", admit * 100);
  } else {
    out = "admit";
  }
  if (k.inflight_cap != 0) out += fmt::format(", cap {}", k.inflight_cap);
  if (k.tokens_per_sec != 0) out += fmt::format(", {}/s", k.tokens_per_sec);
  return out;
}

namespace {

std::string class_label(size_t c) { return std::string(names::kClasses[c]); }

// " normal: 3 (would 0);" for each class that counted one of the two; "".
std::string class_pair(const std::array<ClassStatus, EDGESHED_NUM_CLASSES>& classes, int done,
                       int would) {
  std::string out;
  for (size_t c = 0; c < classes.size(); ++c) {
    const uint64_t n = classes[c].counters[done];
    const uint64_t w = classes[c].counters[would];
    if (n || w) out += fmt::format(" {}: {} (would {});", class_label(c), n, w);
  }
  return out;
}

// " normal: admitted 9 shed 2 would-shed 0;" for each of TCP's or QUIC's
// classes; QUIC's cap counters stay 0, no cap applying to it.
std::string class_totals(const std::array<CounterRow, EDGESHED_NUM_CLASSES>& rows) {
  std::string out;
  for (size_t c = 0; c < rows.size(); ++c) {
    const CounterRow& k = rows[c];
    out +=
        fmt::format(" {}: admitted {} shed {} would-shed {};", class_label(c),
                    k[EDGESHED_CTR_ADMITTED], class_sheds(k.values), class_would_sheds(k.values));
  }
  return out;
}

// The state file's numbers: "-" for none.
std::string num(const std::optional<double>& v, int precision = 3) {
  return v ? fmt::format("{:.{}g}", *v, precision) : "-";
}
std::string num(const std::optional<uint32_t>& v) { return v ? std::to_string(*v) : "-"; }

std::string left(const std::optional<double>& left_s) {
  if (!left_s) return "until removed";
  return fmt::format("{:.0f} s left", *left_s);
}

}  // namespace

// "mode enforce (until removed); level critical (15 s left); ..."
std::string describe_changes(const ipc::ActiveChanges& rc) {
  std::vector<std::string> parts;
  if (rc.mode) parts.push_back(fmt::format("mode {} ({})", rc.mode->value, left(rc.mode->left_s)));
  if (rc.action) {
    parts.push_back(fmt::format("action {} ({})", rc.action->value, left(rc.action->left_s)));
  }
  if (rc.level) {
    parts.push_back(fmt::format("level pinned {} ({})", rc.level->value, left(rc.level->left_s)));
  }
  for (const auto& k : rc.classes) {
    std::string what;
    if (k.admit_fraction) what += " admit_fraction=" + num(k.admit_fraction);
    if (k.inflight_cap) what += " inflight_cap=" + num(k.inflight_cap);
    if (k.tokens_per_sec) what += " tokens_per_sec=" + num(k.tokens_per_sec);
    if (k.burst) what += " burst=" + num(k.burst);
    parts.push_back(fmt::format("class {}{} ({})", k.name, what, left(k.left_s)));
  }
  for (const auto& p : rc.ports) {
    parts.push_back(fmt::format("port {} {}", p.key, p.traffic_class.value_or("removed")));
  }
  for (const auto& p : rc.prefixes) {
    parts.push_back(fmt::format("prefix {} {}", p.key, p.traffic_class.value_or("removed")));
  }
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

namespace {

void daemon_lines(const Json& json, const Json& health, std::vector<std::string>& out) {
  const std::string state = health.value("state", "");
  const std::string why = health.value("why", "");
  if (json.is_null()) {
    const bool known = !why.empty() && state != "not_running";
    out.push_back(
        fmt::format("daemon: not running{} (showing the pinned data plane only: the "
                    "policy below is the last one published)",
                    known ? ": " + why : ", it stopped cleanly or never started"));
    return;
  }
  auto parsed = ipc::parse_state(json);
  if (!parsed) {
    out.push_back("daemon: its state file is unreadable: " + parsed.error().message);
    return;
  }
  const ipc::State& d = *parsed;
  const std::string metrics = d.metrics.value_or("-");
  if (state.empty() || state == "running") {
    out.push_back(
        fmt::format("daemon: running, pid {}, config {}, metrics {}", d.pid, d.config, metrics));
  } else {
    // Stopped, hung or crash-looping: what follows is what it last published.
    out.push_back(
        fmt::format("daemon: {}: {}; config {}, metrics {}", upper(state), why, d.config, metrics));
  }
  const int64_t held_ms = d.monotonic_ms - d.level_since_ms;
  const int64_t since = realtime_ms() - json.value("state_age_ms", int64_t{0}) - held_ms;
  std::string drivers;
  for (const auto& n : d.drivers) drivers += (drivers.empty() ? "" : ",") + n;
  out.push_back(fmt::format(
      "  level {}{} since {} ({} s), pressure {} driven by {}; mode {}; "
      "adaptive limit {}",
      d.level, d.level_pinned ? " (pinned)" : "", clock_time(since), held_ms / 1000,
      num(d.pressure), drivers.empty() ? "none" : drivers, d.mode,
      d.adaptive_limit_open ? fmt::format("{} (open: no queue seen yet)", d.adaptive_limit)
                            : std::to_string(d.adaptive_limit)));
  if (d.learnt) {
    out.push_back(fmt::format(
        "  learnt while healthy: no-queue response {:.1f} ms at {:.0f}/s with {} in service "
        "(at most {}), over {} ticks",
        d.learnt->floor_ms, d.learnt->rate, d.learnt->inflight, d.learnt->peak_inflight,
        d.learnt->readings));
  }
  if (d.fail_open) {
    out.emplace_back(
        "  FAIL-OPEN: every signal is stale and all_stale = fail_open: admitting everything");
  } else if (d.all_stale) {
    out.emplace_back("  every signal is stale: holding the last level (all_stale = hold)");
  }
  out.push_back(fmt::format("  {:<20} {:<13} {:>10} {:>10} {:>8} {:>9}", "signal", "kind", "value",
                            "target", "pressure", "age"));
  for (const auto& s : d.signals) {
    std::string age = s.age_ms ? std::to_string(*s.age_ms) + " ms" : "never";
    std::string flags = s.stale ? " STALE" : "";
    if (s.hard_safety) flags += " hard-safety";
    if (!s.error.empty()) flags += " error: " + s.error;
    out.push_back(fmt::format("  {:<20} {:<13} {:>10} {:>10} {:>8} {:>9}{}", s.name, s.kind,
                              num(s.value, 4), num(std::optional<double>(s.target), 4),
                              num(s.pressure), age, flags));
  }
  if (!d.runtime_changes.empty()) {
    out.push_back("  operator changes: " + describe_changes(d.runtime_changes));
  }
}

void interface_lines(const InterfaceStatus& j, std::vector<std::string>& out) {
  if (j.error) {
    out.push_back(fmt::format("{}: UNREADABLE: {}", j.iface, *j.error));
    return;
  }
  std::string hb = j.heartbeat_age_ms ? std::to_string(*j.heartbeat_age_ms) + " ms ago" : "never";
  out.push_back(fmt::format("{}: hook {}, mode {}, action {}, ABI {}, heartbeat {}", j.iface,
                            j.hook, j.mode, j.action, j.abi_version, hb));
  if (j.fail_open) {
    out.push_back("  FAIL-OPEN: admitting everything: " + j.fail_open_reason.value_or("-"));
  }
  if (j.fail_static_note) out.push_back("  " + *j.fail_static_note);
  // A port's protocol and keep-alive are shown where they are not a port's default.
  const config::PortConfig defaults;
  const std::string_view default_protocol = names::name_of(defaults.protocol);
  const std::string_view default_keepalive = names::name_of(names::kKeepAlive, defaults.keepalive);
  std::string ports;
  for (const auto& p : j.ports) {
    std::string protocols;
    for (const auto& proto : p.protocols) protocols += (protocols.empty() ? "" : "+") + proto;
    ports += fmt::format(" {}:{}", p.port, p.traffic_class);
    if (protocols != default_protocol) ports += "/" + protocols;
    if (p.keepalive != default_keepalive) ports += " (keepalive " + p.keepalive + ")";
    if (p.netns) ports += " in " + *p.netns;
    if (p.timers) ports += " timed at its " + *p.timers;
    if (p.service) {
      ports += fmt::format(" (service {}: {} in service, limit {})", *p.service,
                           p.service_inflight.value_or(0),
                           p.service_cap.value_or(0) ? std::to_string(*p.service_cap) : "none");
    }
  }
  out.push_back("  ports:" + (ports.empty() ? std::string(" none") : ports));
  out.push_back(fmt::format("  {:<10} {:<22} {:>11} {:>11} {:>10} {:>22} {:>12} {:>9} {:>13}",
                            "class", "policy", "in service", "connections", "admitted/s",
                            "shed/s (cap frac rate)", "would-shed/s", "fail-open",
                            "rst sent/capd"));
  for (size_t c = 0; c < j.classes.size(); ++c) {
    const ClassStatus& k = j.classes[c];
    const CounterRow& n = k.counters;
    std::string cap = k.inflight_cap ? std::to_string(k.inflight_cap) : "-";
    std::string conns = std::to_string(k.connections);
    if (k.connection_cap) conns += "/" + std::to_string(k.connection_cap);
    std::string admitted = "-", shed = "-", would_shed = "-";
    if (j.rates) {
      const ClassRates& r = j.rates->classes[c];
      admitted = rate(r.admitted);
      shed = fmt::format("{} ({} {} {})", rate(r.shed), rate(r.shed_cap), rate(r.shed_fraction),
                         rate(r.shed_rate));
      would_shed = rate(r.would_shed);
    }
    out.push_back(
        fmt::format("  {:<10} {:<22} {:>11} {:>11} {:>10} {:>22} {:>12} {:>9} {:>13}",
                    class_label(c), describe_policy(k), std::to_string(k.inflight) + "/" + cap,
                    conns, admitted, shed, would_shed, n[EDGESHED_CTR_FAIL_OPEN],
                    fmt::format("{}/{}", n[EDGESHED_CTR_RST_SENT], n[EDGESHED_CTR_RST_CAPPED])));
  }
  std::array<CounterRow, EDGESHED_NUM_CLASSES> tcp{};
  for (size_t c = 0; c < j.classes.size(); ++c) tcp[c] = j.classes[c].counters;
  out.push_back("  totals:" + class_totals(tcp));
  if (auto s =
          class_pair(j.classes, EDGESHED_CTR_REQUEST_REFUSED, EDGESHED_CTR_WOULD_REFUSE_REQUEST);
      !s.empty())
    out.push_back("  requests refused on open connections:" + s);
  if (auto s = class_pair(j.classes, EDGESHED_CTR_RECLAIMED, EDGESHED_CTR_WOULD_RECLAIM);
      !s.empty())
    out.push_back("  idle connections reclaimed:" + s);
  if (j.quic.protected_ports) {
    out.push_back("  quic (no in-flight cap: the kernel counts no live QUIC connections):" +
                  class_totals(j.quic.classes));
  }
  // Passed undecided, and the rest: sheds dropped rather than answered,
  // RSTs not sent, events lost.
  constexpr std::array kPassed = {EDGESHED_GCTR_UNPARSED,    EDGESHED_GCTR_FRAGMENT,
                                  EDGESHED_GCTR_UNPROTECTED, EDGESHED_GCTR_NO_POLICY,
                                  EDGESHED_GCTR_TOO_DEEP,    EDGESHED_GCTR_BAD_CHECKSUM,
                                  EDGESHED_GCTR_TRANSIT};
  std::string passed, other;
  for (size_t i = 0; i < j.counters.size(); ++i) {
    const bool pass = std::find(kPassed.begin(), kPassed.end(), i) != kPassed.end();
    (pass ? passed : other) += fmt::format(" {}={}", names::kGlobalCounters[i], j.counters[i]);
  }
  out.push_back("  passed without decision:" + passed);
  out.push_back("  dropped or not answered, and events lost:" + other);
}

}  // namespace

std::vector<InterfaceStatus> interfaces_of(const Json& status) {
  std::vector<InterfaceStatus> out;
  for (const auto& j : status["interfaces"]) {
    auto s = interface_status_from_json(j);
    if (s) {
      out.push_back(std::move(*s));
    } else {
      InterfaceStatus unreadable;
      unreadable.iface = j.value("iface", "?");
      unreadable.error = s.error().message;
      out.push_back(std::move(unreadable));
    }
  }
  return out;
}

std::vector<std::string> status_lines(const Json& status) {
  std::vector<std::string> out;
  daemon_lines(status["daemon"], status.value("daemon_health", Json::object()), out);
  for (const auto& s : interfaces_of(status)) interface_lines(s, out);
  return out;
}

}  // namespace edgeshed
