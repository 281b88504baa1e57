#include "common/loopback.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

namespace edgeshed::testing {

Fd listen_on_loopback(int family, uint16_t* port, int backlog) {
  Fd fd(socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_storage ss{};
  socklen_t len;
  if (family == AF_INET) {
    auto* a = reinterpret_cast<sockaddr_in*>(&ss);
    a->sin_family = AF_INET;
    a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    len = sizeof(*a);
  } else {
    int off = 0;
    setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
    auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
    a->sin6_family = AF_INET6;
    a->sin6_addr = in6addr_any;
    len = sizeof(*a);
  }
  EXPECT_EQ(bind(fd.get(), reinterpret_cast<sockaddr*>(&ss), len), 0);
  EXPECT_EQ(listen(fd.get(), backlog), 0);
  EXPECT_EQ(getsockname(fd.get(), reinterpret_cast<sockaddr*>(&ss), &len), 0);
  *port = ntohs(family == AF_INET ? reinterpret_cast<sockaddr_in*>(&ss)->sin_port
                                  : reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
  return fd;
}

Fd connect_loopback(int family, uint16_t port) {
  Fd fd(socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  int rc;
  if (family == AF_INET) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    rc = connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a));
  } else {
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_port = htons(port);
    a.sin6_addr = in6addr_loopback;
    rc = connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a));
  }
  EXPECT_EQ(rc, 0);
  return fd;
}

}  // namespace edgeshed::testing
