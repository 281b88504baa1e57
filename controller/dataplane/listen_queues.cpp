#include "dataplane/listen_queues.h"

#include <arpa/inet.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <sys/socket.h>

#include <cerrno>
#include <span>

#include "common/fd.h"
#include "dataplane/errno_message.h"
#include "dataplane/netlink_dump.h"

namespace edgeshed {
namespace {

constexpr uint32_t kTcpListen = 10;  // TCP_LISTEN of the kernel's tcp_states.h

// One request for both families: the original request format
// (TCPDIAG_GETSOCK, struct inet_diag_req) has no family, so the kernel
// dumps IPv4 and IPv6 listeners in one walk of the listening hash (its
// 16,384 buckets or more), where SOCK_DIAG_BY_FAMILY walks it once per
// family. The walk was the daemon's largest cost at its tick; this halves it.
// The kernel still serves the format (inet_diag_rcv_msg_compat) for old ss.
Status dump_listeners(int fd, std::vector<ListenQueue>& out) {
  struct {
    nlmsghdr nlh;
    inet_diag_req req;
  } msg{};
  msg.nlh.nlmsg_len = sizeof(msg);
  msg.nlh.nlmsg_type = TCPDIAG_GETSOCK;
  msg.nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  msg.req.idiag_states = 1u << kTcpListen;
  return netlink_dump(fd, std::as_bytes(std::span(&msg, 1)), TCPDIAG_GETSOCK, "sock_diag",
                      [&out](const nlmsghdr& h) {
                        if (h.nlmsg_len < NLMSG_LENGTH(sizeof(inet_diag_msg))) return;
                        const auto* d = static_cast<const inet_diag_msg*>(NLMSG_DATA(&h));
                        // For a listener the kernel reports the accept queue
                        // as rqueue and the backlog limit as wqueue
                        // (tcp_diag_get_info).
                        out.push_back({ntohs(d->id.idiag_sport), d->idiag_rqueue, d->idiag_wqueue});
                      });
}

}  // namespace

Result<std::vector<ListenQueue>> ListenQueueDump::read() {
  if (!fd_.valid()) {
    fd_.reset(socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG));
    if (!fd_.valid()) return make_error("sock_diag socket: " + errno_text(errno));
  }
  std::vector<ListenQueue> out;
  if (auto s = dump_listeners(fd_.get(), out); !s) {
    fd_.reset();
    return s.error();
  }
  return out;
}

Result<std::vector<ListenQueue>> read_listen_queues() { return ListenQueueDump().read(); }

}  // namespace edgeshed
