#include "daemon/service_identity.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>
#include <string>

namespace edgeshed::daemon {

namespace {

// /proc/net/tcp's columns: sl, local address, remote address, state, ...,
// uid is the eighth; LISTEN is state 0A.
constexpr std::size_t kLocalColumn = 1;
constexpr std::size_t kStateColumn = 3;
constexpr std::size_t kUidColumn = 7;
constexpr std::string_view kListenState = "0A";

std::vector<std::string_view> columns(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

}  // namespace

void parse_listeners(std::string_view proc_net_tcp, const std::vector<uint16_t>& ports,
                     std::vector<ServiceIdentity::Listener>& out) {
  while (!proc_net_tcp.empty()) {
    const std::size_t end = proc_net_tcp.find('\n');
    const std::string_view line = proc_net_tcp.substr(0, end);
    proc_net_tcp =
        end == std::string_view::npos ? std::string_view{} : proc_net_tcp.substr(end + 1);
    const auto cols = columns(line);
    if (cols.size() <= kUidColumn || cols[kStateColumn] != kListenState) continue;
    const std::string_view local = cols[kLocalColumn];
    const std::size_t colon = local.rfind(':');
    if (colon == std::string_view::npos) continue;
    unsigned port = 0;
    uint32_t uid = 0;
    const std::string_view port_hex = local.substr(colon + 1);
    const std::string_view uid_text = cols[kUidColumn];
    if (std::from_chars(port_hex.data(), port_hex.data() + port_hex.size(), port, 16).ec !=
            std::errc{} ||
        std::from_chars(uid_text.data(), uid_text.data() + uid_text.size(), uid).ec !=
            std::errc{}) {
      continue;
    }
    if (std::find(ports.begin(), ports.end(), port) == ports.end()) continue;
    const bool seen =
        std::any_of(out.begin(), out.end(), [&](const auto& l) { return l.port == port; });
    if (!seen) out.push_back({static_cast<uint16_t>(port), uid});
  }
}

ServiceIdentity current_service(std::vector<uint16_t> ports) {
  ServiceIdentity identity;
  std::sort(ports.begin(), ports.end());
  ports.erase(std::unique(ports.begin(), ports.end()), ports.end());
  identity.ports = std::move(ports);
  for (const char* path : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    parse_listeners(text.str(), identity.ports, identity.listeners);
  }
  std::sort(identity.listeners.begin(), identity.listeners.end(),
            [](const auto& a, const auto& b) { return a.port < b.port; });
  return identity;
}

}  // namespace edgeshed::daemon
