#include "daemon/start_checks.h"

#include <net/if.h>

#include <memory>

#include "dataplane/capabilities.h"

namespace edgeshed::daemon {
namespace {

// "lo, eth0": the interfaces of this network namespace, for the error about
// one that is not among them.
std::string interfaces_here() {
  std::unique_ptr<struct if_nameindex, decltype(&if_freenameindex)> all(if_nameindex(),
                                                                        &if_freenameindex);
  std::string out;
  for (const struct if_nameindex* i = all.get(); i != nullptr && i->if_index != 0; ++i) {
    out += (out.empty() ? "" : ", ") + std::string(i->if_name);
  }
  return out.empty() ? "none" : out;
}

}  // namespace

Status check_config_can_start(const config::Config& config, const std::string& config_path) {
  if (auto s = config::check_protects_something(config, config_path); !s) return s;
  for (const auto& iface : config.interfaces) {
    if (if_nametoindex(iface.name.c_str()) == 0) {
      return make_error(
          iface.where + " = \"" + iface.name +
          "\": no such interface in this network namespace (it has: " + interfaces_here() + ")");
    }
  }
  bool in_namespace = false;
  bool named_by_process = false;
  for (const auto& p : config.ports) {
    if (!p.netns) continue;
    in_namespace = true;
    named_by_process |= p.netns->kind != config::NetnsRef::Kind::kPath ||
                        p.netns->path.starts_with("/proc/");
  }
  if (in_namespace) return require_namespace_capabilities(named_by_process);
  return {};
}

}  // namespace edgeshed::daemon
