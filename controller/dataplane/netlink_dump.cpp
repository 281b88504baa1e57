#include "dataplane/netlink_dump.h"

#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <string>

#include "dataplane/errno_message.h"

namespace edgeshed {
namespace {

constexpr size_t kReceiveBuffer = size_t{32} * 1024;

}  // namespace

Status netlink_dump(int fd, std::span<const std::byte> request, uint16_t reply_type,
                    std::string_view what, const std::function<void(const nlmsghdr&)>& on_message) {
  const std::string name(what);
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (sendto(fd, request.data(), request.size(), 0, reinterpret_cast<sockaddr*>(&kernel),
             sizeof(kernel)) < 0) {
    return make_error(name + " request: " + errno_text(errno));
  }
  alignas(nlmsghdr) std::array<char, kReceiveBuffer> buf;
  for (;;) {
    ssize_t n = recv(fd, buf.data(), buf.size(), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return make_error(name + " reply: " + errno_text(errno));
    if (n == 0) return make_error(name + " reply: the kernel closed the socket");
    // Each message bounded by what was received, before it is read.
    const size_t total = static_cast<size_t>(n);
    for (size_t off = 0; off + sizeof(nlmsghdr) <= total;) {
      const auto* h = reinterpret_cast<const nlmsghdr*>(buf.data() + off);
      if (h->nlmsg_len < sizeof(nlmsghdr) || h->nlmsg_len > total - off) {
        return make_error(name + " reply: a message overruns the datagram");
      }
      off += NLMSG_ALIGN(h->nlmsg_len);
      if (h->nlmsg_type == NLMSG_DONE) return {};
      if (h->nlmsg_type == NLMSG_ERROR) {
        const auto* err = static_cast<const nlmsgerr*>(NLMSG_DATA(h));
        const int code = h->nlmsg_len >= NLMSG_LENGTH(sizeof(nlmsgerr)) ? -err->error : EIO;
        return make_error(name + ": " + errno_text(code));
      }
      if (h->nlmsg_type == reply_type) on_message(*h);
    }
  }
}

}  // namespace edgeshed
