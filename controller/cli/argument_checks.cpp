#include "cli/argument_checks.h"

#include <charconv>
#include <chrono>

#include <fmt/format.h>

#include "common/duration.h"
#include "common/ip_prefix.h"
#include "common/names.h"
#include "ipc/reset_target.h"

namespace edgeshed {

Result<PortClass> parse_port_spec(const std::string& spec, uint8_t protocols) {
  auto colon = spec.find(':');
  std::string port_text = spec.substr(0, colon);
  uint32_t port = 0;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port == 0 ||
      port > 65535) {
    return make_error("port '" + spec + "': expected 1..65535, optionally :CLASS");
  }
  uint32_t class_id = EDGESHED_CLASS_NORMAL;
  if (colon != std::string::npos) {
    auto c = names::find(names::kClasses, spec.substr(colon + 1));
    if (!c) return make_error("port '" + spec + "': class must be critical, normal or background");
    class_id = *c;
  }
  return PortClass{static_cast<uint16_t>(port), class_id, protocols};
}

CLI::Validator port_spec_validator() {
  return CLI::Validator(
      [](const std::string& spec) -> std::string {
        auto p = parse_port_spec(spec, EDGESHED_PORT_TCP);
        return p ? "" : p.error().message;
      },
      "PORT[:CLASS]");
}

CLI::Validator port_number_validator() {
  return CLI::Validator(
      [](const std::string& text) -> std::string {
        uint32_t port = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), port);
        if (ec != std::errc() || end != text.data() + text.size() || port == 0 || port > 65535) {
          return "port '" + text + "': expected a port number in 1..65535";
        }
        return "";
      },
      "PORT");
}

CLI::Validator duration_validator(bool positive) {
  return CLI::Validator(
      [positive](const std::string& text) -> std::string {
        auto d = parse_duration(text);
        if (!d) return "duration '" + text + "': " + d.error().message;
        if (positive && d->count() <= 0) return "duration must be over 0";
        return "";
      },
      "DURATION");
}

CLI::Validator seconds_validator(double lo_s, double hi_s) {
  return CLI::Validator(
      [lo_s, hi_s](std::string& text) -> std::string {
        const std::string given = text;
        double seconds = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
        if (ec != std::errc() || end != text.data() + text.size()) {
          auto d = parse_duration(text);
          if (!d) return "duration '" + given + "': " + d.error().message;
          seconds = std::chrono::duration<double>(*d).count();
        }
        if (seconds < lo_s || seconds > hi_s) {
          return fmt::format("duration '{}': expected {}s..{}s", given, lo_s, hi_s);
        }
        text = fmt::format("{}", seconds);
        return "";
      },
      "DURATION");
}

CLI::Validator ip_prefix_validator() {
  return CLI::Validator(
      [](const std::string& text) -> std::string {
        auto p = parse_ip_prefix(text);
        return p ? "" : "prefix '" + text + "': " + p.error().message;
      },
      "CIDR");
}

CLI::Validator reset_target_validator() {
  return CLI::Validator(
      [](const std::string& what) -> std::string {
        auto target = ipc::parse_reset_target(what);
        return target ? "" : target.error().message;
      },
      "WHAT");
}

}  // namespace edgeshed
