#include "dataplane/link_type.h"

#include <net/if.h>
#include <net/if_arp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "common/fd.h"
#include "dataplane/errno_message.h"

namespace edgeshed {

Result<MacAddress> read_ethernet_address(const std::string& iface) {
  if (iface.empty() || iface.size() >= IFNAMSIZ) {
    return make_error("interface name '" + iface + "' is not a valid name");
  }
  // A socket of this namespace: /sys may show another one's devices.
  const Fd sock(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!sock) return make_error("cannot open a socket to read the link type: " + errno_text(errno));
  ifreq request{};
  std::memcpy(request.ifr_name, iface.data(), iface.size());
  if (ioctl(sock.get(), SIOCGIFHWADDR, &request) != 0) {
    return make_error("cannot read the link type of " + iface + ": " + errno_text(errno));
  }
  const int type = request.ifr_hwaddr.sa_family;
  if (type != ARPHRD_ETHER && type != ARPHRD_LOOPBACK) {
    return make_error(iface + " has no Ethernet framing (link type " + std::to_string(type) +
                      ", as on tun or WireGuard devices): edgeshed parses Ethernet frames and "
                      "would protect nothing there");
  }
  MacAddress mac{};
  std::memcpy(mac.data(), request.ifr_hwaddr.sa_data, mac.size());
  return mac;
}

}  // namespace edgeshed
