#include "dataplane/link_type.h"

#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iterator>

#include "common/fd.h"
#include "dataplane/errno_message.h"

namespace edgeshed {

namespace {

// linux/if_arp.h's, which glibc's net/if_arp.h lacks.
constexpr int kArphrdIp6Gre = 823;

// Link types whose packets start at the IP header.
constexpr int kIpLinkTypes[] = {ARPHRD_TUNNEL, ARPHRD_TUNNEL6, ARPHRD_SIT,
                                ARPHRD_IPGRE,  kArphrdIp6Gre,  ARPHRD_NONE};

bool is_ip_link(int type) {
  return std::find(std::begin(kIpLinkTypes), std::end(kIpLinkTypes), type) !=
         std::end(kIpLinkTypes);
}

// An interface request on a socket of this namespace (/sys may show another
// one's devices); what names the answer for an error.
Status interface_ioctl(const std::string& iface, unsigned long op, ifreq& request,
                       const char* what) {
  if (iface.empty() || iface.size() >= IFNAMSIZ) {
    return make_error("interface name '" + iface + "' is not a valid name");
  }
  const Fd sock(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!sock) {
    return make_error(std::string("cannot open a socket to read ") + what + ": " +
                      errno_text(errno));
  }
  std::memcpy(request.ifr_name, iface.data(), iface.size());
  if (ioctl(sock.get(), op, &request) != 0) {
    return make_error(std::string("cannot read ") + what + " of " + iface + ": " +
                      errno_text(errno));
  }
  return {};
}

}  // namespace

Result<LinkFraming> read_link_framing(const std::string& iface) {
  ifreq request{};
  if (auto s = interface_ioctl(iface, SIOCGIFHWADDR, request, "the link type"); !s) {
    return s.error();
  }
  const int type = request.ifr_hwaddr.sa_family;
  LinkFraming link;
  if (is_ip_link(type)) {
    link.framing = EDGESHED_FRAMING_IP;
    return link;
  }
  if (type != ARPHRD_ETHER && type != ARPHRD_LOOPBACK) {
    return make_error(iface + " has link type " + std::to_string(type) +
                      ": edgeshed parses Ethernet frames, and IP packets on IP devices "
                      "(tunnels, WireGuard, tun), and would protect nothing there");
  }
  std::memcpy(link.mac.data(), request.ifr_hwaddr.sa_data, link.mac.size());
  return link;
}

Result<bool> strips_vlan_tags(const std::string& iface) {
  ethtool_value flags{};
  flags.cmd = ETHTOOL_GFLAGS;
  ifreq request{};
  request.ifr_data = reinterpret_cast<char*>(&flags);
  if (auto s = interface_ioctl(iface, SIOCETHTOOL, request, "the offloads"); !s) return s.error();
  return (flags.data & ETH_FLAG_RXVLAN) != 0;
}

Result<std::string> driver_name(const std::string& iface) {
  ethtool_drvinfo info{};
  info.cmd = ETHTOOL_GDRVINFO;
  ifreq request{};
  request.ifr_data = reinterpret_cast<char*>(&info);
  if (auto s = interface_ioctl(iface, SIOCETHTOOL, request, "the driver"); !s) return s.error();
  return std::string(info.driver, strnlen(info.driver, sizeof(info.driver)));
}

}  // namespace edgeshed
