#include "cli/fail_open_warning.h"

#include <fmt/format.h>

#include <iostream>

#include "cli/interface_targets.h"
#include "dataplane/attach.h"

namespace edgeshed {
namespace {

constexpr uint64_t kNsPerMs = 1000000;

}  // namespace

std::optional<std::string> fail_open_warning(const Maps& maps, const std::string& iface,
                                             const std::string& what) {
  auto cfg = maps.read_config();
  auto ctl = maps.read_control();
  if (!cfg || !ctl || cfg->heartbeat_timeout_ns == 0) return std::nullopt;
  const uint64_t now = monotonic_ns();
  const bool never = ctl->heartbeat_ns == 0;
  if (!never && now - ctl->heartbeat_ns <= cfg->heartbeat_timeout_ns) return std::nullopt;
  return fmt::format(
      "{0} on {1} has no effect yet: {1} fails open (admits everything) while no controller "
      "publishes a heartbeat (timeout {2} ms{3}); make it act with `edgeshed run --config FILE` "
      "managing {1}, or without a daemon by attaching with --heartbeat-timeout-ms 0 (a static "
      "policy)",
      what, iface, cfg->heartbeat_timeout_ns / kNsPerMs, never ? ", none ever published" : "");
}

void warn_if_failing_open(const std::string& only, const std::string& what) {
  auto ifaces = target_interfaces(only);
  if (!ifaces) return;
  for (const auto& iface : *ifaces) {
    auto maps = Maps::open_pinned(pin_dir_for(iface));
    if (!maps) continue;
    if (auto w = fail_open_warning(*maps, iface, what)) {
      std::cerr << "edgeshed: warning: " << *w << "\n";
    }
  }
}

}  // namespace edgeshed
