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

}  // namespace

int64_t realtime_ms() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

std::vector<std::string> attached_interfaces() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(EDGESHED_PIN_ROOT, ec)) {
    if (e.path().filename() == EDGESHED_HOST_PIN_DIR) continue;  // the host's limits
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
  j["mode"] = names::name_of(names::kModes, cfg->mode);
  j["action"] = names::name_of(names::kActions, cfg->action);
  j["draw"] = names::name_of(names::kDraws, cfg->draw);
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
         {"class", names::name_of(names::kClasses, p.class_id)},
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
      k["counters"][std::string(names::name_of(names::kCounters, i))] = stats->cls[c][i];
    }
    j["classes"][std::string(names::name_of(names::kClasses, c))] = k;
    Json q;
    for (int i = 0; i < EDGESHED_NUM_COUNTERS; ++i) {
      q["counters"][std::string(names::name_of(names::kCounters, i))] = stats->quic_cls[c][i];
    }
    j["quic"]["classes"][std::string(names::name_of(names::kClasses, c))] = q;
  }
  j["quic"]["protected"] = quic_ports;
  j["quic"]["inflight_cap"] = "not applied: the kernel counts no live QUIC connections";
  for (int i = 0; i < EDGESHED_NUM_GLOBAL_COUNTERS; ++i) {
    j["counters"][std::string(names::name_of(names::kGlobalCounters, i))] = stats->global[i];
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
    rates["classes"][std::string(names::name_of(names::kClasses, c))] = k;
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

}  // namespace edgeshed
