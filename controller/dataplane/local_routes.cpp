#include "dataplane/local_routes.h"

#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <span>
#include <tuple>

#include "common/fd.h"
#include "dataplane/errno_message.h"
#include "dataplane/netlink_dump.h"

namespace edgeshed {
namespace {

constexpr size_t kV4Bytes = 4;
constexpr size_t kV6Bytes = 16;

// The route's table: RTA_TABLE when present (tables above 255), else
// rtm_table.
uint32_t route_table(const rtmsg& rt, const nlmsghdr& h) {
  uint32_t table = rt.rtm_table;
  int len = static_cast<int>(RTM_PAYLOAD(&h));
  for (const rtattr* a = RTM_RTA(&rt); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
    if (a->rta_type == RTA_TABLE && RTA_PAYLOAD(a) >= sizeof(uint32_t)) {
      std::memcpy(&table, RTA_DATA(a), sizeof(table));
    }
  }
  return table;
}

// A local route's destination, if the message is one.
std::optional<IpPrefix> local_destination(const nlmsghdr& h) {
  if (h.nlmsg_len < NLMSG_LENGTH(sizeof(rtmsg))) return std::nullopt;
  const auto* rt = static_cast<const rtmsg*>(NLMSG_DATA(&h));
  if (rt->rtm_type != RTN_LOCAL || route_table(*rt, h) != RT_TABLE_LOCAL) return std::nullopt;
  const size_t bytes = rt->rtm_family == AF_INET ? kV4Bytes : kV6Bytes;
  if ((rt->rtm_family != AF_INET && rt->rtm_family != AF_INET6) || rt->rtm_dst_len > bytes * 8) {
    return std::nullopt;
  }
  IpPrefix prefix;
  prefix.family = rt->rtm_family == AF_INET ? IpFamily::kV4 : IpFamily::kV6;
  prefix.length = rt->rtm_dst_len;
  int len = static_cast<int>(RTM_PAYLOAD(&h));
  for (const rtattr* a = RTM_RTA(rt); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
    if (a->rta_type == RTA_DST && RTA_PAYLOAD(a) == bytes) {
      std::memcpy(prefix.address.data(), RTA_DATA(a), bytes);
      return prefix;
    }
  }
  return std::nullopt;  // a local route always names its destination
}

}  // namespace

Result<std::vector<IpPrefix>> read_local_routes() {
  Fd fd(socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE));
  if (!fd.valid()) return make_error("route socket: " + errno_text(errno));
  struct {
    nlmsghdr nlh;
    rtmsg rt;
  } msg{};
  msg.nlh.nlmsg_len = sizeof(msg);
  msg.nlh.nlmsg_type = RTM_GETROUTE;
  msg.nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  msg.rt.rtm_family = AF_UNSPEC;  // both families in one dump
  std::vector<IpPrefix> out;
  auto s = netlink_dump(fd.get(), std::as_bytes(std::span(&msg, 1)), RTM_NEWROUTE, "route dump",
                        [&out](const nlmsghdr& h) {
                          if (auto p = local_destination(h)) out.push_back(*p);
                        });
  if (!s) return s.error();
  // An address on two interfaces has a local route on each.
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return std::tie(a.family, a.address, a.length) < std::tie(b.family, b.address, b.length);
  });
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace edgeshed
