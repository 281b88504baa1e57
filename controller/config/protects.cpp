#include "config/config.h"

namespace edgeshed::config {

Status check_protects_something(const Config& config, const std::string& path) {
  if (config.interfaces.empty()) {
    return make_error(path +
                      ": no [[interface]] configured: add the interface the service's clients "
                      "arrive on, e.g. [[interface]] name = \"eth0\"");
  }
  if (config.ports.empty()) {
    return make_error(path +
                      ": no [[port]] configured: nothing would be protected; add the service's "
                      "port, e.g. [[port]] port = 443 (observe mode, the default, sheds nothing)");
  }
  return {};
}

}  // namespace edgeshed::config
