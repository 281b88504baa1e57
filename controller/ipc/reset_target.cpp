#include "ipc/reset_target.h"

#include <array>
#include <charconv>
#include <utility>

#include "common/names.h"

namespace edgeshed::ipc {
namespace {

constexpr std::string_view kChoices =
    "give all, mode, action, level, class:CLASS, port:PORT or prefix:CIDR";

constexpr std::array<std::pair<ResetGroup, std::string_view>, 4> kGroups = {{
    {ResetGroup::kAll, "all"},
    {ResetGroup::kMode, "mode"},
    {ResetGroup::kAction, "action"},
    {ResetGroup::kLevel, "level"},
}};

}  // namespace

std::string_view to_string(ResetGroup group) {
  for (const auto& [g, name] : kGroups) {
    if (g == group) return name;
  }
  return "?";
}

std::string_view reset_kind(const ResetTarget& target) {
  struct Kind {
    // cppcheck-suppress returnDanglingLifetime ; ipc::to_string returns a view of a static table
    std::string_view operator()(ResetGroup g) const { return to_string(g); }
    std::string_view operator()(const ResetClass& /*c*/) const { return "class"; }
    std::string_view operator()(const ResetPort& /*p*/) const { return "port"; }
    std::string_view operator()(const ResetPrefix& /*p*/) const { return "prefix"; }
  };
  return std::visit(Kind{}, target);
}

Result<ResetTarget> parse_reset_target(std::string_view what) {
  const std::string text(what);
  for (const auto& [group, name] : kGroups) {
    if (what == name) return ResetTarget{group};
  }
  if (what.starts_with("class:")) {
    auto cls = names::parse<law::TrafficClass>(what.substr(6));
    if (cls) return ResetTarget{ResetClass{*cls}};
    return make_error("reset '" + text + "': the class must be critical, normal or background");
  }
  if (what.starts_with("port:")) {
    const std::string_view digits = what.substr(5);
    uint32_t port = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
    if (ec != std::errc() || end != digits.data() + digits.size() || port == 0 || port > 65535) {
      return make_error("reset '" + text + "': the port must be in 1..65535");
    }
    return ResetTarget{ResetPort{static_cast<uint16_t>(port)}};
  }
  if (what.starts_with("prefix:")) {
    auto p = parse_ip_prefix(what.substr(7));
    if (!p) return make_error("reset '" + text + "': " + p.error().message);
    return ResetTarget{ResetPrefix{*p}};
  }
  return make_error("cannot reset '" + text + "': " + std::string(kChoices));
}

std::string to_string(const ResetTarget& target) {
  struct Words {
    std::string operator()(ResetGroup g) const { return std::string(to_string(g)); }
    std::string operator()(const ResetClass& c) const {
      return "class:" + std::string(names::name_of(c.traffic_class));
    }
    std::string operator()(const ResetPort& p) const { return "port:" + std::to_string(p.port); }
    std::string operator()(const ResetPrefix& p) const { return "prefix:" + to_string(p.prefix); }
  };
  return std::visit(Words{}, target);
}

std::vector<std::string> reset_target_words() {
  std::vector<std::string> out;
  out.reserve(kGroups.size() + names::kClasses.size() + 2);
  for (const auto& [group, name] : kGroups) out.emplace_back(name);
  for (const auto& c : names::all_names(names::kClasses)) out.push_back("class:" + c);
  out.insert(out.end(), {"port:", "prefix:"});
  return out;
}

}  // namespace edgeshed::ipc
