#include "cli/port_change.h"

#include <algorithm>
#include <tuple>

#include "common/names.h"

namespace edgeshed {
namespace {

std::vector<PortClass> sorted(std::vector<PortClass> ports) {
  std::sort(ports.begin(), ports.end(), [](const PortClass& a, const PortClass& b) {
    return std::tie(a.port, a.protocols) < std::tie(b.port, b.protocols);
  });
  return ports;
}

bool same(const PortClass& a, const PortClass& b) {
  return a.port == b.port && a.class_id == b.class_id && a.protocols == b.protocols &&
         a.requests == b.requests;
}

}  // namespace

std::string describe_ports(const std::vector<PortClass>& ports) {
  std::string out;
  for (const auto& p : sorted(ports)) {
    if (!out.empty()) out += ", ";
    out += std::to_string(p.port);
    if (p.protocols != EDGESHED_PORT_TCP) {
      std::string protocols;
      for (uint32_t proto = 0; proto < EDGESHED_NUM_PROTOCOLS; ++proto) {
        if (p.protocols & (1u << proto)) {
          protocols += (protocols.empty() ? "" : "+") + std::string(names::kProtocols[proto]);
        }
      }
      out += "/" + protocols;
    }
    if (p.class_id != EDGESHED_CLASS_NORMAL) {
      out += ":" + std::string(names::name_of(names::kClasses, p.class_id));
    }
  }
  return out.empty() ? "none" : out;
}

std::string describe_port_change(const std::vector<PortClass>& before,
                                 const std::vector<PortClass>& after) {
  const auto a = sorted(before);
  const auto b = sorted(after);
  if (std::equal(a.begin(), a.end(), b.begin(), b.end(), same)) return "";
  return "ports " + describe_ports(before) + " -> " + describe_ports(after);
}

}  // namespace edgeshed
