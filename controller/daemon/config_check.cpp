#include "daemon/config_check.h"

#include <fmt/format.h>

#include <cerrno>
#include <csignal>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "common/duration.h"
#include "common/join.h"
#include "common/names.h"
#include "daemon/service_namespaces.h"
#include "daemon/start_checks.h"
#include "dataplane/attach.h"
#include "dataplane/capabilities.h"
#include "dataplane/hook_choice.h"
#include "ipc/run_dir.h"
#include "ipc/state.h"
#include "signals/signal_kinds.h"
#include "signals/signal_set.h"

namespace edgeshed::daemon {
namespace {

// The pid of the daemon whose state file the run directory holds, if that
// process lives: read, never locked.
std::optional<int> daemon_in(const std::string& run_dir) {
  std::ifstream in(run_dir + "/" + ipc::kStateFileName);
  if (!in) return std::nullopt;
  auto j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("pid") || !j["pid"].is_number_integer()) return std::nullopt;
  const int pid = j["pid"].get<int>();
  if (pid <= 0 || (kill(pid, 0) != 0 && errno != EPERM)) return std::nullopt;
  return pid;
}

std::string interface_line(const config::InterfaceConfig& iface) {
  const auto hook =
      choose_hook(iface.name, iface.hook_named ? std::optional(static_cast<uint32_t>(iface.hook))
                                               : std::nullopt);
  std::string line =
      fmt::format("interface {}: hook {}", iface.name, names::name_of(names::kHooks, hook.hook));
  std::error_code ec;
  line += std::filesystem::exists(pin_dir_for(iface.name), ec)
              ? ", adopting the data plane attached there (no moment without a program)"
              : ", attaching a fresh data plane";
  if (!hook.note.empty())
    line += fmt::format(" ({}{})", hook.warning ? "WARNING: " : "", hook.note);
  return line;
}

std::string ports_line(const config::Config& cfg) {
  std::vector<std::string> ports;
  for (const auto& p : cfg.ports) {
    std::string text = fmt::format("{}/{} {}", p.port, names::name_of(p.protocol),
                                   names::name_of(p.traffic_class));
    if (p.latency_objective) text += " p99 objective " + format_duration(*p.latency_objective);
    if (p.netns) {
      const auto ns = resolve_netns(*p.netns);
      text += " in " + p.netns->describe() +
              (ns ? fmt::format(" (net:[{}] now)", ns->inode)
                  : " (not found now: " + ns.error().message + "; followed once it is)");
    }
    ports.push_back(std::move(text));
  }
  return "protects: " + join(ports, ", ");
}

std::string behaviour_line(const config::Config& cfg) {
  const auto timeout = cfg.daemon.heartbeat_timeout;
  return fmt::format(
      "mode {}, action {}; the data plane {} if the daemon stops ticking; on stop: {}",
      names::name_of(cfg.dataplane.mode), names::name_of(cfg.dataplane.action),
      timeout.count() == 0 ? "keeps the last policy (fail-static)"
                           : "fails open after " + format_duration(timeout),
      cfg.daemon.on_exit == config::OnExit::kDetach ? "detach" : "fail open, staying attached");
}

std::string signals_line(const config::Config& cfg) {
  std::vector<std::string> signals;
  for (const auto& s : cfg.signals) signals.push_back(s.name + " (" + s.kind + ")");
  return fmt::format("limit {}; signals: {}{}", names::name_of(cfg.limit.algorithm),
                     join(signals, ", "), cfg.default_signals ? " (the default)" : "");
}

std::string listeners_line(const config::Config& cfg) {
  auto where = [](const config::ListenConfig& l) {
    return l.enabled ? fmt::format("{}:{}", l.address, l.port) : std::string("off");
  };
  return fmt::format("metrics {}, agent {}", where(cfg.metrics.listen), where(cfg.agent.listen));
}

}  // namespace

ConfigCheck check_config(const std::string& config_path, const std::string& run_dir) {
  ConfigCheck out;
  auto cfg = signals::load_config(config_path);
  if (!cfg) {
    out.problems.push_back(cfg.error().message);
    return out;
  }
  if (!run_dir.empty()) cfg->daemon.run_dir = run_dir;
  if (auto s = check_config_can_start(*cfg, config_path); !s)
    out.problems.push_back(s.error().message);
  // Making the sources checks their keys; none is sampled.
  if (auto s = signals::SignalSet::build(cfg->signals, {}); !s) {
    out.problems.push_back(s.error().message);
  }
  if (auto s = require_capabilities(); !s) {
    out.problems.push_back("`edgeshed run` needs privileges this process does not have: " +
                           s.error().message);
  }
  if (!std::filesystem::exists("/sys/kernel/btf/vmlinux")) {
    out.problems.emplace_back(
        "the kernel has no BTF (/sys/kernel/btf/vmlinux): the data plane cannot load");
  }
  out.plan.push_back("config " + config_path + ": parsed, every key in range");
  std::string dir_line = "run directory " + cfg->daemon.run_dir;
  if (auto pid = daemon_in(cfg->daemon.run_dir)) {
    dir_line += fmt::format(
        ": a daemon (pid {}) runs there now, and `run` would be refused until it stops; to give "
        "it this config, make it its config file and reload it (SIGHUP, `systemctl reload "
        "edgeshed`)",
        *pid);
  }
  out.plan.push_back(dir_line);
  for (const auto& iface : cfg->interfaces) out.plan.push_back(interface_line(iface));
  out.plan.push_back(ports_line(*cfg));
  out.plan.push_back(behaviour_line(*cfg));
  out.plan.push_back(signals_line(*cfg));
  out.plan.push_back(listeners_line(*cfg));
  return out;
}

}  // namespace edgeshed::daemon
