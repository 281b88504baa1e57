// What is protected and how it is classed: [[interface]], [[port]] and [[prefix]].
#include <algorithm>
#include <string>

#include "common/names.h"
#include "config/parse_sections.h"

namespace edgeshed::config::sections {

using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::nanoseconds;

namespace {

constexpr std::size_t kMaxInterfaceName = 15;  // IFNAMSIZ - 1

// The longest pid Linux hands out (PID_MAX_LIMIT on 64-bit).
constexpr uint32_t kMaxPid = 4194304;

// netns's word for the namespace found by its listening socket.
constexpr std::string_view kListener = "listener";

bool absolute_path(TableReader& reader, std::string_view key, std::string& out,
                   std::string_view or_word = {}) {
  if (!reader.string(key, out)) return false;
  if (!or_word.empty() && out == or_word) return true;
  if (out.empty() || out.front() != '/' || out.find('\0') != std::string::npos) {
    reader.invalid(key, or_word.empty()
                            ? "must be an absolute path"
                            : "must be an absolute path or \"" + std::string(or_word) + "\"");
    return false;
  }
  return true;
}

// [[port]] netns, pid or cgroup: at most one of them.
std::optional<NetnsRef> parse_netns(TableReader& reader, uint16_t port) {
  std::optional<NetnsRef> found;
  std::string_view first;
  const auto take = [&](std::string_view key, NetnsRef ref) {
    if (found) {
      reader.invalid(key, "names the service's network namespace, as " + std::string(first) +
                              " does already: give one of netns, pid and cgroup");
      return;
    }
    found = std::move(ref);
    first = key;
  };
  std::string path;
  uint32_t pid = 0;
  if (absolute_path(reader, "netns", path, kListener)) {
    if (path == kListener) {
      take("netns", {NetnsRef::Kind::kListener, "", 0, port});
    } else {
      take("netns", {NetnsRef::Kind::kPath, path, 0, 0});
    }
  }
  if (reader.integer("pid", pid, 1, kMaxPid)) take("pid", {NetnsRef::Kind::kPid, "", pid, 0});
  if (absolute_path(reader, "cgroup", path)) {
    take("cgroup", {NetnsRef::Kind::kCgroup, path, 0, 0});
  }
  return found;
}

}  // namespace

void parse_interface(TableReader& reader, std::vector<InterfaceConfig>& interfaces,
                     std::map<std::string, std::string>& seen) {
  InterfaceConfig interface;
  reader.require("name");
  interface.where = reader.where("name") + ": " + reader.path_of("name");
  if (reader.string("name", interface.name)) {
    const bool bad_char = std::any_of(interface.name.begin(), interface.name.end(), [](char c) {
      return c == '/' || c == ':' || c <= ' ' || c == 0x7f;
    });
    if (interface.name.empty() || interface.name.size() > kMaxInterfaceName || bad_char) {
      reader.invalid("name",
                     "must be an interface name of 1-15 characters without '/', ':' or spaces");
    } else if (auto [it, inserted] = seen.emplace(interface.name, reader.path()); !inserted) {
      reader.invalid("name", "duplicate of " + it->second);
    }
  }
  interface.hook_named = reader.choice("hook", interface.hook, names::kHooks, EDGESHED_HOOK_XDP);
  interfaces.push_back(interface);
}

void parse_port(TableReader& reader, std::vector<PortConfig>& ports,
                std::map<std::tuple<uint16_t, Protocol, std::string>, std::string>& seen) {
  PortConfig port;
  uint32_t number = 0;
  reader.require("port");
  reader.choice("protocol", port.protocol, names::kProtocols);
  reader.choice("class", port.traffic_class, names::kClasses);
  const bool numbered = reader.integer("port", number, 1, 65535);
  if (numbered) port.port = static_cast<uint16_t>(number);
  nanoseconds objective{0};
  if (reader.duration("latency_objective", objective, milliseconds(1), minutes(1))) {
    if (port.protocol == Protocol::kQuic) {
      reader.invalid("latency_objective",
                     "the kernel measures response times of TCP ports only; state it on the "
                     "TCP port");
    }
    port.latency_objective = objective;
  }
  if (reader.choice("keepalive", port.keepalive, names::kKeepAlive) &&
      port.protocol == Protocol::kQuic && port.keepalive != EDGESHED_REQUESTS_PASS) {
    reader.invalid("keepalive", "open connections are refused or reclaimed on TCP ports only");
  }
  port.netns = parse_netns(reader, port.port);
  if (numbered) {
    // One port number may be served in several namespaces (two pods on
    // 8080): each is a service of its own. Within one, a port is listed
    // once per protocol, and its protocols share their class.
    const auto where = [](const PortConfig& p) { return p.netns ? p.netns->describe() : ""; };
    for (const auto& other : ports) {
      if (other.port != port.port || other.netns != port.netns) continue;
      const std::string& first = seen[{other.port, other.protocol, where(other)}];
      if (other.protocol == port.protocol) {
        reader.invalid("port", "duplicate of " + first);
      } else if (other.traffic_class != port.traffic_class) {
        reader.invalid("class", "must be the class of " + first +
                                    ": the protocols of one port share their class");
      }
    }
    seen.emplace(std::tuple(port.port, port.protocol, where(port)), reader.path());
  }
  ports.push_back(port);
}

void parse_prefix(TableReader& reader, std::vector<PrefixConfig>& prefixes,
                  std::map<std::string, std::string>& seen) {
  PrefixConfig prefix;
  std::string cidr;
  reader.require("cidr");
  if (reader.string("cidr", cidr)) {
    Result<IpPrefix> parsed = parse_ip_prefix(cidr);
    if (!parsed) {
      reader.invalid("cidr", parsed.error().message);
    } else {
      prefix.prefix = parsed.value();
      if (auto [it, inserted] = seen.emplace(to_string(prefix.prefix), reader.path()); !inserted) {
        reader.invalid("cidr", "duplicate of " + it->second);
      }
    }
  }
  reader.require("class");
  reader.choice("class", prefix.traffic_class, names::kClasses);
  prefixes.push_back(prefix);
}

void check_prefix_counts(TableReader& root, const std::vector<PrefixConfig>& prefixes) {
  for (IpFamily family : {IpFamily::kV4, IpFamily::kV6}) {
    const auto count = std::count_if(prefixes.begin(), prefixes.end(),
                                     [family](const auto& p) { return p.prefix.family == family; });
    if (count > EDGESHED_MAX_PREFIXES) {
      root.invalid("prefix", std::to_string(count) + (family == IpFamily::kV4 ? " IPv4" : " IPv6") +
                                 " prefixes: at most " + std::to_string(EDGESHED_MAX_PREFIXES) +
                                 " per address family");
    }
  }
}

}  // namespace edgeshed::config::sections
