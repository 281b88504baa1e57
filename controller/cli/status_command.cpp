// status: what the data plane of an interface is doing, from its pins alone.
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/names.h"
#include "dataplane/attach.h"

namespace edgeshed {
namespace {

Result<nlohmann::ordered_json> interface_status(const std::string& iface) {
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
  auto ports = maps->read_ports();
  if (!ports) return ports.error();

  nlohmann::ordered_json j;
  j["iface"] = iface;
  j["abi_version"] = cfg->abi_version;
  j["hook"] = hook_name(cfg->hook);
  j["mode"] = mode_name(cfg->mode);
  j["action"] = action_name(cfg->action);
  j["draw"] = draw_name(cfg->draw);
  j["heartbeat_timeout_ms"] = cfg->heartbeat_timeout_ns / 1000000;
  if (ctl->heartbeat_ns == 0) {
    j["heartbeat_age_ms"] = nullptr;
  } else {
    j["heartbeat_age_ms"] = now > ctl->heartbeat_ns ? (now - ctl->heartbeat_ns) / 1000000 : 0;
  }
  j["fail_open"] = cfg->heartbeat_timeout_ns != 0 &&
                   (ctl->heartbeat_ns == 0 || now - ctl->heartbeat_ns > cfg->heartbeat_timeout_ns);
  j["level"] = set->level;
  j["policy_generation"] = set->generation;
  for (const auto& p : *ports) {
    j["ports"].push_back({{"port", p.port}, {"class", class_name(p.class_id)}});
  }
  for (uint32_t c = 0; c < EDGESHED_NUM_CLASSES; ++c) {
    nlohmann::ordered_json k;
    const auto& pol = set->cls[c];
    k["shed_fraction"] = static_cast<double>(pol.shed_frac) / EDGESHED_FRAC_ONE;
    k["inflight_cap"] = pol.inflight_cap;
    k["tokens_per_sec"] = pol.tokens_per_sec;
    k["burst"] = pol.burst;
    k["inflight"] = (*inflight)[c];
    for (int i = 0; i < EDGESHED_NUM_COUNTERS; ++i) {
      k["counters"][std::string(counter_name(i))] = stats->cls[c][i];
    }
    j["classes"][std::string(class_name(c))] = k;
  }
  for (int i = 0; i < EDGESHED_NUM_GLOBAL_COUNTERS; ++i) {
    j["counters"][std::string(global_counter_name(i))] = stats->global[i];
  }
  return j;
}

constexpr const char* kDaemonState = "/run/edgeshed/state.json";

// The running daemon's state file, if a daemon is alive to vouch for it.
nlohmann::ordered_json daemon_state() {
  std::ifstream in(kDaemonState);
  if (!in) return nullptr;
  auto j = nlohmann::ordered_json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.contains("pid")) return nullptr;
  if (kill(j["pid"].get<int>(), 0) != 0) return nullptr;  // a crashed daemon's leftover
  int64_t age = static_cast<int64_t>(monotonic_ns() / 1000000) - j.value("monotonic_ms", 0);
  j["state_age_ms"] = age;
  return j;
}

void print_daemon(const nlohmann::ordered_json& d) {
  if (d.is_null()) {
    std::cout << "daemon: not running (showing the pinned data plane only)\n";
    return;
  }
  int64_t since = d["monotonic_ms"].get<int64_t>() - d["level_since_ms"].get<int64_t>();
  std::cout << "daemon: pid " << d["pid"] << ", level " << d["level"].get<std::string>()
            << (d["level_pinned"].get<bool>() ? " (pinned)" : "") << " for " << since / 1000
            << " s, pressure " << d["pressure"] << " (" << d["drivers"].dump() << "), mode "
            << d["mode"].get<std::string>() << ", adaptive limit " << d["adaptive_limit"] << "\n";
  for (const auto& s : d["signals"]) {
    std::cout << "  signal " << s["name"].get<std::string>() << " (" << s["kind"].get<std::string>()
              << "): value " << s["value"] << ", target " << s["target"] << ", age "
              << s["age_ms"] << " ms" << (s["stale"].get<bool>() ? ", STALE" : "")
              << (s["hard_safety"].get<bool>() ? ", hard-safety" : "");
    if (s.contains("error")) std::cout << ", error: " << s["error"].get<std::string>();
    std::cout << "\n";
  }
}

void print_text(const nlohmann::ordered_json& j) {
  std::cout << j["iface"].get<std::string>() << ": hook " << j["hook"].get<std::string>()
            << ", mode " << j["mode"].get<std::string>() << ", action "
            << j["action"].get<std::string>() << ", ABI " << j["abi_version"] << "\n";
  if (j["fail_open"].get<bool>()) {
    std::cout << "  FAIL-OPEN: no controller heartbeat within " << j["heartbeat_timeout_ms"]
              << " ms (is `edgeshed run` running?)\n";
  }
  std::cout << "  ports:";
  for (const auto& p : j.value("ports", nlohmann::ordered_json::array())) {
    std::cout << " " << p["port"] << ":" << p["class"].get<std::string>();
  }
  std::cout << "\n";
  for (const auto& [name, k] : j["classes"].items()) {
    std::cout << "  " << name << ": in-flight " << k["inflight"] << " (cap " << k["inflight_cap"]
              << "), shed fraction " << k["shed_fraction"] << ", rate " << k["tokens_per_sec"]
              << "/s\n   ";
    for (const auto& [counter, v] : k["counters"].items()) std::cout << " " << counter << "=" << v;
    std::cout << "\n";
  }
  std::cout << "  packets:";
  for (const auto& [counter, v] : j["counters"].items()) std::cout << " " << counter << "=" << v;
  std::cout << "\n";
}

}  // namespace

void add_status_command(CLI::App& app, CommandRunner& run) {
  struct Args {
    std::string iface;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("status", "Show each attached interface's data plane");
  cmd->add_option("-i,--iface", args->iface, "Only this interface");
  cmd->add_flag("--json", args->json, "Machine-readable output");
  cmd->callback([args, &run] {
    run = [args] {
      std::vector<std::string> ifaces;
      if (!args->iface.empty()) {
        ifaces.push_back(args->iface);
      } else {
        std::error_code ec;
        for (const auto& e : std::filesystem::directory_iterator(EDGESHED_PIN_ROOT, ec)) {
          ifaces.push_back(e.path().filename().string());
        }
      }
      if (ifaces.empty())
        return fail("no interface is attached (nothing in " EDGESHED_PIN_ROOT ")");
      nlohmann::ordered_json all = nlohmann::ordered_json::array();
      for (const auto& iface : ifaces) {
        auto s = interface_status(iface);
        if (!s) return fail(iface + ": " + s.error().message);
        all.push_back(*s);
      }
      auto daemon = daemon_state();
      if (args->json) {
        nlohmann::ordered_json out = args->iface.empty() ? all : all[0];
        if (args->iface.empty()) {
          out = {{"daemon", daemon}, {"interfaces", all}};
        } else {
          out["daemon"] = daemon;
        }
        std::cout << out.dump(2) << "\n";
      } else {
        print_daemon(daemon);
        for (const auto& j : all) print_text(j);
      }
      return 0;
    };
  });
}

}  // namespace edgeshed
