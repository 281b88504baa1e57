#include "dataplane/vlan_devices.h"

#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <span>
#include <string_view>

#include "common/fd.h"
#include "dataplane/errno_message.h"
#include "dataplane/link_type.h"
#include "dataplane/netlink_dump.h"

namespace edgeshed {
namespace {

constexpr std::string_view kVlanKind = "vlan";

bool is_vlan_kind(const rtattr& linkinfo) {
  int len = static_cast<int>(RTA_PAYLOAD(&linkinfo));
  for (const auto* a = static_cast<const rtattr*>(RTA_DATA(&linkinfo)); RTA_OK(a, len);
       a = RTA_NEXT(a, len)) {
    if (a->rta_type != IFLA_INFO_KIND) continue;
    // The kind is NUL-terminated within the attribute.
    std::string_view kind(static_cast<const char*>(RTA_DATA(a)), RTA_PAYLOAD(a));
    return kind.substr(0, kind.find('\0')) == kVlanKind;
  }
  return false;
}

// Whether the link message is a VLAN device over ifindex.
bool vlan_over(const nlmsghdr& h, int ifindex) {
  if (h.nlmsg_len < NLMSG_LENGTH(sizeof(ifinfomsg))) return false;
  const auto* info = static_cast<const ifinfomsg*>(NLMSG_DATA(&h));
  bool over = false;
  bool vlan = false;
  int len = static_cast<int>(IFLA_PAYLOAD(&h));
  for (const rtattr* a = IFLA_RTA(info); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
    if (a->rta_type == IFLA_LINK && RTA_PAYLOAD(a) >= sizeof(uint32_t)) {
      uint32_t lower = 0;
      std::memcpy(&lower, RTA_DATA(a), sizeof(lower));
      over = static_cast<int>(lower) == ifindex;
    } else if (a->rta_type == IFLA_LINKINFO) {
      vlan = is_vlan_kind(*a);
    }
  }
  return over && vlan;
}

}  // namespace

Result<bool> has_vlan_devices(int ifindex) {
  const Fd fd(socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE));
  if (!fd.valid()) return make_error("link socket: " + errno_text(errno));
  struct {
    nlmsghdr nlh;
    ifinfomsg info;
  } msg{};
  msg.nlh.nlmsg_len = sizeof(msg);
  msg.nlh.nlmsg_type = RTM_GETLINK;
  msg.nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  msg.info.ifi_family = AF_UNSPEC;
  bool found = false;
  auto s = netlink_dump(fd.get(), std::as_bytes(std::span(&msg, 1)), RTM_NEWLINK, "link dump",
                        [&found, ifindex](const nlmsghdr& h) { found |= vlan_over(h, ifindex); });
  if (!s) return s.error();
  return found;
}

Result<bool> vlan_tags_hidden_from_xdp(const std::string& iface, int ifindex) {
  auto strips = strips_vlan_tags(iface);
  if (!strips || !*strips) return strips;
  return has_vlan_devices(ifindex);
}

}  // namespace edgeshed
