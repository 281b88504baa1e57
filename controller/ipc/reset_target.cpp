#include "ipc/reset_target.h"

#include <charconv>

#include "common/ip_prefix.h"
#include "common/names.h"

namespace edgeshed::ipc {
namespace {

constexpr std::string_view kChoices =
    "give all, mode, action, level, class:CLASS, port:PORT or prefix:CIDR";

}  // namespace

Status check_reset_target(std::string_view what) {
  const std::string text(what);
  if (what == "all" || what == "mode" || what == "action" || what == "level") return {};
  if (what.starts_with("class:")) {
    if (names::find(names::kClasses, what.substr(6))) return {};
    return make_error("reset '" + text + "': the class must be critical, normal or background");
  }
  if (what.starts_with("port:")) {
    const std::string_view digits = what.substr(5);
    uint32_t port = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
    if (ec != std::errc() || end != digits.data() + digits.size() || port == 0 || port > 65535) {
      return make_error("reset '" + text + "': the port must be in 1..65535");
    }
    return {};
  }
  if (what.starts_with("prefix:")) {
    if (auto p = parse_ip_prefix(what.substr(7)); !p) {
      return make_error("reset '" + text + "': " + p.error().message);
    }
    return {};
  }
  return make_error("cannot reset '" + text + "': " + std::string(kChoices));
}

std::vector<std::string> reset_target_words() {
  std::vector<std::string> out = {"all", "mode", "action", "level"};
  for (const auto& c : names::all_names(names::kClasses)) out.push_back("class:" + c);
  out.insert(out.end(), {"port:", "prefix:"});
  return out;
}

}  // namespace edgeshed::ipc
