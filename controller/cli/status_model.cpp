#include "cli/status_model.h"

#include <fmt/format.h>
#include <algorithm>
#include <csignal>
#include <ctime>

#include <cctype>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "cli/names.h"
#include "common/names.h"
#include "common/stats.h"
#include "dataplane/attach.h"
#include "ipc/run_dir.h"
#include "ipc/start_history.h"
#include "ipc/state.h"

namespace edgeshed {
namespace {

using Json = nlohmann::ordered_json;

constexpr uint64_t kNsPerMs = 1000000;

int64_t realtime_ms() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

std::string clock_time(int64_t unix_ms) {
  time_t t = static_cast<time_t>(unix_ms / 1000);
  tm local{};
  localtime_r(&t, &local);
  char buf[16];
  if (strftime(buf, sizeof(buf), "%H:%M:%S", &local) == 0) return "--:--:--";
  return buf;
}

std::string num(const Json& v, int precision = 3) {
  if (v.is_null()) return "-";
  if (v.is_number_float()) return fmt::format("{:.{}g}", v.get<double>(), precision);
  if (v.is_number()) return std::to_string(v.get<int64_t>());
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  return v.is_string() ? v.get<std::string>() : v.dump();
}

std::string upper(std::string s) {
  for (auto& c : s)
    c = c == '_' ? '-' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// The pid belongs to an edgeshed (this very binary's name), not to a process
// that reused the pid of a daemon that died.
bool edgeshed_alive(int pid) {
  if (pid <= 0 || (kill(pid, 0) != 0 && errno != EPERM)) return false;
  auto comm = [](const std::string& path) {
    std::ifstream in(path);
    std::string name;
    std::getline(in, name);
    return name;
  };
  return comm("/proc/" + std::to_string(pid) + "/comm") == comm("/proc/self/comm");
}

// The state letter of /proc/PID/stat: after the ")" that ends the name.
char proc_state(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close = stat.rfind(')');
  return close == std::string::npos || close + 2 >= stat.size() ? 0 : stat[close + 2];
}

std::string rate(const Json& v) {
  return v.is_null() ? "-" : fmt::format("{:.1f}", v.get<double>());
}

std::string describe_policy(const Json& k) {
  const double admit = 1.0 - k["shed_fraction"].get<double>();
  std::string out;
  if (admit <= 0) {
    out = "shed all";
  } else if (admit < 1) {
    out = fmt::format("admit {:.0f}%", admit * 100);
  } else {
    out = "admit";
  }
  if (k["inflight_cap"].get<uint64_t>() != 0)
    out += fmt::format(", cap {}", num(k["inflight_cap"]));
  if (k["tokens_per_sec"].get<uint64_t>() != 0)
    out += fmt::format(", {}/s", num(k["tokens_per_sec"]));
  return out;
}

// " normal: admitted 9 shed 2 would-shed 0;" for each of TCP's or QUIC's
// classes; QUIC's cap counters stay 0, no cap applying to it.
std::string class_totals(const Json& classes) {
  std::string out;
  for (const auto& [name, k] : classes.items()) {
    const Json& c = k["counters"];
    const uint64_t shed = c["shed_cap"].get<uint64_t>() + c["shed_fraction"].get<uint64_t>() +
                          c["shed_rate"].get<uint64_t>();
    const uint64_t would_shed = c["would_shed_cap"].get<uint64_t>() +
                                c["would_shed_fraction"].get<uint64_t>() +
                                c["would_shed_rate"].get<uint64_t>();
    out += fmt::format(" {}: admitted {} shed {} would-shed {};", name, num(c["admitted"]), shed,
                       would_shed);
  }
  return out;
}

// The state file's numbers, as num() shows their JSON.
std::string num(const std::optional<double>& v, int precision = 3) {
  return v ? fmt::format("{:.{}g}", *v, precision) : "-";
}
std::string num(const std::optional<uint32_t>& v) { return v ? std::to_string(*v) : "-"; }

std::string left(const std::optional<double>& left_s) {
  if (!left_s) return "until removed";
  return fmt::format("{:.0f} s left", *left_s);
}

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

}  // namespace

std::vector<std::string> attached_interfaces() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(EDGESHED_PIN_ROOT, ec)) {
    out.push_back(e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

Result<InterfaceReading> read_interface(const std::string& iface) {
  auto maps = Maps::open_pinned(pin_dir_for(iface));
  if (!maps) return maps.error();
  auto cfg = maps->read_config();
  if (!cfg) return cfg.error();
  auto ctl = maps->read_control();
  if (!ctl) return ctl.error();
  const uint64_t now = monotonic_ns();  // next to the heartbeat it is compared with
  auto set = maps->read_active_policy();
  if (!set) return set.error();
  auto stats = maps->read_stats();
  if (!stats) return stats.error();
  auto inflight = maps->read_inflight_classes();
  if (!inflight) return inflight.error();
  auto connections = maps->read_connection_classes();
  if (!connections) return connections.error();
  auto ports = maps->read_ports();
  if (!ports) return ports.error();

  InterfaceReading r;
  r.stats = *stats;
  r.at_ns = now;
  Json& j = r.json;
  j["iface"] = iface;
  j["abi_version"] = cfg->abi_version;
  j["hook"] = hook_name(cfg->hook);
  j["mode"] = mode_name(cfg->mode);
  j["action"] = action_name(cfg->action);
  j["draw"] = draw_name(cfg->draw);
  j["heartbeat_timeout_ms"] = cfg->heartbeat_timeout_ns / kNsPerMs;
  const bool never = ctl->heartbeat_ns == 0;
  const uint64_t age = never || now < ctl->heartbeat_ns ? 0 : now - ctl->heartbeat_ns;
  j["heartbeat_age_ms"] = never ? Json(nullptr) : Json(age / kNsPerMs);
  const bool fail_open =
      cfg->heartbeat_timeout_ns != 0 && (never || age > cfg->heartbeat_timeout_ns);
  j["fail_open"] = fail_open;
  if (fail_open) {
    j["fail_open_reason"] = never
                                ? "no controller has ever published a heartbeat"
                                : fmt::format("no controller heartbeat for {} ms (timeout {} ms)",
                                              age / kNsPerMs, cfg->heartbeat_timeout_ns / kNsPerMs);
  }
  j["events_per_sec_per_cpu"] = cfg->events_per_sec_per_cpu;
  j["rst_per_sec_per_cpu"] = cfg->rst_per_sec_per_cpu;
  const auto& reflect = cfg->rst_reflect;
  j["rst_reflect"] = {
      {"per_sec", reflect.per_sec},
      {"burst", std::max<uint32_t>(reflect.burst, 1)},
      {"prefix_v4", reflect.prefix4 ? reflect.prefix4 : EDGESHED_DEFAULT_RST_REFLECT_PREFIX4},
      {"prefix_v6", reflect.prefix6 ? reflect.prefix6 : EDGESHED_DEFAULT_RST_REFLECT_PREFIX6},
      {"per_conn", reflect.per_conn}};
  j["hash_prefix_v4"] = cfg->hash_prefix4 ? cfg->hash_prefix4 : EDGESHED_DEFAULT_HASH_PREFIX4;
  j["hash_prefix_v6"] = cfg->hash_prefix6 ? cfg->hash_prefix6 : EDGESHED_DEFAULT_HASH_PREFIX6;
  j["level"] = set->level;
  j["policy_generation"] = set->generation;
  j["ports"] = Json::array();
  bool quic_ports = false;
  for (const auto& p : *ports) {
    Json protocols = Json::array();
    for (uint32_t proto = 0; proto < EDGESHED_NUM_PROTOCOLS; ++proto) {
      if (p.protocols & (1u << proto)) protocols.push_back(names::kProtocols[proto]);
    }
    quic_ports = quic_ports || (p.protocols & EDGESHED_PORT_QUIC);
    j["ports"].push_back(
        {{"port", p.port},
         {"class", class_name(p.class_id)},
         {"protocols", protocols},
         {"keepalive", p.requests < names::kKeepAlive.size() ? names::kKeepAlive[p.requests]
                                                             : std::string_view("unknown")}});
  }
  for (uint32_t c = 0; c < EDGESHED_NUM_CLASSES; ++c) {
    Json k;
    const auto& pol = set->cls[c];
    k["shed_fraction"] = static_cast<double>(pol.shed_frac) / EDGESHED_FRAC_ONE;
    k["inflight_cap"] = pol.inflight_cap;
    k["tokens_per_sec"] = pol.tokens_per_sec;
    k["burst"] = pol.burst;
    k["inflight"] = (*inflight)[c];
    k["connections"] = (*connections)[c];
    k["connection_cap"] = pol.conn_cap;
    for (int i = 0; i < EDGESHED_NUM_COUNTERS; ++i) {
      k["counters"][std::string(counter_name(i))] = stats->cls[c][i];
    }
    j["classes"][std::string(class_name(c))] = k;
    Json q;
    for (int i = 0; i < EDGESHED_NUM_COUNTERS; ++i) {
      q["counters"][std::string(counter_name(i))] = stats->quic_cls[c][i];
    }
    j["quic"]["classes"][std::string(class_name(c))] = q;
  }
  j["quic"]["protected"] = quic_ports;
  j["quic"]["inflight_cap"] = "not applied: the kernel counts no live QUIC connections";
  for (int i = 0; i < EDGESHED_NUM_GLOBAL_COUNTERS; ++i) {
    j["counters"][std::string(global_counter_name(i))] = stats->global[i];
  }
  return r;
}

InterfaceReading unreadable_interface(const std::string& iface, const std::string& error) {
  InterfaceReading r;
  r.json = {{"iface", iface}, {"error", error}};
  return r;
}

void add_rates(InterfaceReading& after, const InterfaceReading& before) {
  if (after.json.contains("error") || before.json.contains("error")) return;
  const double secs = static_cast<double>(after.at_ns - before.at_ns) / 1e9;
  if (secs <= 0) return;
  Json rates;
  rates["interval_s"] = secs;
  for (uint32_t c = 0; c < EDGESHED_NUM_CLASSES; ++c) {
    const ClassCounters& a = after.stats.cls[c];
    const ClassCounters& b = before.stats.cls[c];
    auto per_sec = [&](uint64_t x, uint64_t y) { return static_cast<double>(x - y) / secs; };
    Json k;
    k["admitted"] = per_sec(a[EDGESHED_CTR_ADMITTED], b[EDGESHED_CTR_ADMITTED]);
    k["shed"] = per_sec(class_sheds(a), class_sheds(b));
    k["shed_cap"] = per_sec(a[EDGESHED_CTR_SHED_CAP], b[EDGESHED_CTR_SHED_CAP]);
    k["shed_fraction"] = per_sec(a[EDGESHED_CTR_SHED_FRAC], b[EDGESHED_CTR_SHED_FRAC]);
    k["shed_rate"] = per_sec(a[EDGESHED_CTR_SHED_RATE], b[EDGESHED_CTR_SHED_RATE]);
    k["would_shed"] = per_sec(class_would_sheds(a), class_would_sheds(b));
    k["fail_open"] = per_sec(a[EDGESHED_CTR_FAIL_OPEN], b[EDGESHED_CTR_FAIL_OPEN]);
    k["rst_sent"] = per_sec(a[EDGESHED_CTR_RST_SENT], b[EDGESHED_CTR_RST_SENT]);
    k["rst_capped"] = per_sec(a[EDGESHED_CTR_RST_CAPPED], b[EDGESHED_CTR_RST_CAPPED]);
    rates["classes"][std::string(class_name(c))] = k;
  }
  after.json["rates"] = rates;
}

namespace {

// The state file as the daemon wrote it, with "state_age_ms"; nullopt when
// there is none, or it is not the schema's.
struct StateRead {
  Json json;
  ipc::State state;
  int64_t age_ms = 0;
};
std::optional<StateRead> read_state_file(const std::string& run_dir) {
  std::ifstream in(run_dir + "/" + ipc::kStateFileName);
  if (!in) return std::nullopt;
  auto j = Json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return std::nullopt;
  auto state = ipc::parse_state(j);
  if (!state) return std::nullopt;
  const int64_t now_ms = static_cast<int64_t>(monotonic_ns() / kNsPerMs);
  const int64_t age_ms = now_ms - state->monotonic_ms;
  j["state_age_ms"] = age_ms;
  return StateRead{std::move(j), std::move(*state), age_ms};
}

}  // namespace

Json health_json(const DaemonHealth& health) {
  return {{"state", to_string(health.state)}, {"why", health.why}};
}

DaemonReading read_daemon(const std::string& run_dir) {
  DaemonFacts f;
  f.now_unix_ms = realtime_ms();
  auto read = read_state_file(run_dir);
  Json state = read ? std::move(read->json) : Json(nullptr);
  if (read) {
    f.has_state = true;
    f.pid = read->state.pid;
    f.alive = edgeshed_alive(f.pid);
    f.proc_state = f.alive ? proc_state(f.pid) : 0;
    f.state_age_ms = read->age_ms;
    f.tick_ms = read->state.tick_ms;
  }
  if (auto starts = ipc::read_start_history(run_dir)) f.starts = std::move(*starts);
  Json health = health_json(diagnose_daemon(f));
  if (!daemon_alive(f)) state = nullptr;  // a dead daemon's leftover
  return {std::move(state), std::move(health)};
}

Json status_json(const Json& daemon, const Json& health,
                 const std::vector<InterfaceReading>& interfaces) {
  const bool deciding = health.value("state", "running") == "running";
  const std::string why = health.value("why", "");
  Json all = Json::array();
  for (auto j : interfaces) {
    if (!j.json.contains("error") && !deciding) {
      if (j.json["fail_open"].get<bool>()) {
        j.json["fail_open_reason"] = j.json["fail_open_reason"].get<std::string>() + ": " + why;
      } else if (j.json["heartbeat_timeout_ms"] == 0) {
        j.json["fail_static_note"] =
            "heartbeat timeout 0 (fail-static): the last policy published stays in force: " + why;
      }
    }
    all.push_back(j.json);
  }
  return {{"daemon", daemon}, {"daemon_health", health}, {"interfaces", all}};
}

std::vector<std::string> status_lines(const Json& status) {
  std::vector<std::string> out;
  daemon_lines(status["daemon"], status.value("daemon_health", Json::object()), out);
  for (const auto& j : status["interfaces"]) {
    if (j.contains("error")) {
      out.push_back(fmt::format("{}: UNREADABLE: {}", num(j["iface"]), num(j["error"])));
      continue;
    }
    std::string hb =
        j["heartbeat_age_ms"].is_null() ? "never" : num(j["heartbeat_age_ms"]) + " ms ago";
    out.push_back(fmt::format("{}: hook {}, mode {}, action {}, ABI {}, heartbeat {}",
                              num(j["iface"]), num(j["hook"]), num(j["mode"]), num(j["action"]),
                              num(j["abi_version"]), hb));
    if (j["fail_open"].get<bool>()) {
      out.push_back("  FAIL-OPEN: admitting everything: " + num(j["fail_open_reason"]));
    }
    if (j.contains("fail_static_note")) out.push_back("  " + num(j["fail_static_note"]));
    std::string ports;
    for (const auto& p : j["ports"]) {
      std::string protocols;
      for (const auto& proto : p["protocols"]) {
        protocols += (protocols.empty() ? "" : "+") + proto.get<std::string>();
      }
      ports += fmt::format(" {}:{}", num(p["port"]), num(p["class"]));
      if (protocols != "tcp") ports += "/" + protocols;
      if (p.value("keepalive", "pass") != "pass")
        ports += " (keepalive " + num(p["keepalive"]) + ")";
    }
    out.push_back("  ports:" + (ports.empty() ? std::string(" none") : ports));
    const bool rates = j.contains("rates");
    out.push_back(fmt::format("  {:<10} {:<22} {:>11} {:>11} {:>10} {:>22} {:>12} {:>9} {:>13}",
                              "class", "policy", "in service", "connections", "admitted/s",
                              "shed/s (cap frac rate)", "would-shed/s", "fail-open",
                              "rst sent/capd"));
    for (const auto& [name, k] : j["classes"].items()) {
      const Json& c = k["counters"];
      const Json r = rates ? j["rates"]["classes"][name] : Json();
      std::string cap = k["inflight_cap"].get<uint64_t>() ? num(k["inflight_cap"]) : "-";
      std::string conns = num(k["connections"]);
      if (k["connection_cap"].get<uint64_t>()) conns += "/" + num(k["connection_cap"]);
      std::string shed = rates ? fmt::format("{} ({} {} {})", rate(r["shed"]), rate(r["shed_cap"]),
                                             rate(r["shed_fraction"]), rate(r["shed_rate"]))
                               : "-";
      out.push_back(fmt::format("  {:<10} {:<22} {:>11} {:>11} {:>10} {:>22} {:>12} {:>9} {:>13}",
                                name, describe_policy(k), num(k["inflight"]) + "/" + cap, conns,
                                rates ? rate(r["admitted"]) : "-", shed,
                                rates ? rate(r["would_shed"]) : "-", num(c["fail_open"]),
                                num(c["rst_sent"]) + "/" + num(c["rst_capped"])));
    }
    out.push_back("  totals:" + class_totals(j["classes"]));
    std::string refused;
    for (const auto& [name, k] : j["classes"].items()) {
      const uint64_t n = k["counters"].value("requests_refused", uint64_t{0});
      const uint64_t w = k["counters"].value("would_refuse_requests", uint64_t{0});
      if (n || w) refused += fmt::format(" {}: {} (would {});", name, n, w);
    }
    if (!refused.empty()) out.push_back("  requests refused on open connections:" + refused);
    if (j.contains("quic") && j["quic"].value("protected", false)) {
      out.push_back("  quic (no in-flight cap: the kernel counts no live QUIC connections):" +
                    class_totals(j["quic"]["classes"]));
    }
    std::string packets;
    for (const auto& [counter, v] : j["counters"].items()) packets += " " + counter + "=" + num(v);
    out.push_back("  passed without decision:" + packets);
  }
  return out;
}

}  // namespace edgeshed
