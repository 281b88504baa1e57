#include "dataplane/local_route_watch.h"

#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>

#include "dataplane/errno_message.h"

namespace edgeshed {
namespace {

constexpr size_t kReceiveBuffer = size_t{16} * 1024;

}  // namespace

Result<LocalRouteWatch> LocalRouteWatch::open() {
  Fd fd(socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE));
  if (!fd.valid()) return make_error("route watch socket: " + errno_text(errno));
  sockaddr_nl groups{};
  groups.nl_family = AF_NETLINK;
  groups.nl_groups = RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE;
  if (bind(fd.get(), reinterpret_cast<sockaddr*>(&groups), sizeof(groups)) != 0) {
    return make_error("route watch: " + errno_text(errno));
  }
  return LocalRouteWatch(std::move(fd));
}

bool LocalRouteWatch::drain() const {
  alignas(nlmsghdr) std::array<char, kReceiveBuffer> buf;
  bool changed = false;
  for (;;) {
    ssize_t n = recv(fd_.get(), buf.data(), buf.size(), 0);
    if (n > 0) {
      changed = true;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == ENOBUFS) {
      changed = true;
      continue;
    }
    return changed;
  }
}

}  // namespace edgeshed
