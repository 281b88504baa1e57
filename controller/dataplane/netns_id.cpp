#include "dataplane/netns_id.h"

#include <fcntl.h>
#include <linux/net_namespace.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <optional>

#include "common/fd.h"
#include "dataplane/errno_message.h"

namespace edgeshed {

namespace {

constexpr int32_t kKernelPicks = -1;  // NETNSA_NSID in RTM_NEWNSID

// One request: the namespace by its file descriptor; for RTM_NEWNSID the id
// wanted as well.
struct NsidRequest {
  alignas(nlmsghdr) std::array<std::byte, 64> bytes{};
  size_t size = NLMSG_SPACE(sizeof(rtgenmsg));  // attributes start aligned

  void attr(uint16_t kind, const void* value, size_t len) {
    rtattr a{};
    a.rta_len = static_cast<unsigned short>(RTA_LENGTH(len));
    a.rta_type = kind;
    std::memcpy(bytes.data() + size, &a, sizeof(a));
    std::memcpy(bytes.data() + size + RTA_LENGTH(0), value, len);
    size += RTA_SPACE(len);
  }
};

NsidRequest nsid_request(uint16_t type, int ns_fd, std::optional<int32_t> id) {
  NsidRequest r;
  const auto fd = static_cast<uint32_t>(ns_fd);
  r.attr(NETNSA_FD, &fd, sizeof(fd));
  if (id) r.attr(NETNSA_NSID, &*id, sizeof(*id));
  nlmsghdr h{};
  h.nlmsg_len = static_cast<uint32_t>(r.size);
  h.nlmsg_type = type;
  h.nlmsg_flags = NLM_F_REQUEST | (type == RTM_NEWNSID ? NLM_F_ACK : 0);
  h.nlmsg_seq = 1;
  std::memcpy(r.bytes.data(), &h, sizeof(h));
  rtgenmsg g{};
  g.rtgen_family = AF_UNSPEC;
  std::memcpy(r.bytes.data() + NLMSG_HDRLEN, &g, sizeof(g));
  return r;
}

// Sends request and reads its one answer: the id of an RTM_NEWNSID reply
// (NETNSA_NSID_NOT_ASSIGNED when there is none), or none for an ack.
Result<std::optional<int32_t>> exchange(int sock, const NsidRequest& request, const char* what) {
  if (send(sock, request.bytes.data(), request.size, 0) != static_cast<ssize_t>(request.size))
    return make_error(std::string("cannot send ") + what + ": " + errno_text(errno));
  std::array<std::byte, 4096> buf{};
  const ssize_t n = recv(sock, buf.data(), buf.size(), 0);
  if (n < 0) return make_error(std::string("no answer to ") + what + ": " + errno_text(errno));
  const auto total = static_cast<size_t>(n);
  // Each message and attribute bounded by what came before it is read.
  for (size_t off = 0; off + sizeof(nlmsghdr) <= total;) {
    nlmsghdr h{};
    std::memcpy(&h, buf.data() + off, sizeof(h));
    if (h.nlmsg_len < NLMSG_HDRLEN || h.nlmsg_len > total - off) break;
    const std::byte* data = buf.data() + off + NLMSG_HDRLEN;
    const size_t data_len = h.nlmsg_len - NLMSG_HDRLEN;
    off += NLMSG_ALIGN(h.nlmsg_len);
    if (h.nlmsg_type == NLMSG_ERROR) {
      nlmsgerr e{};
      if (data_len < sizeof(e)) break;
      std::memcpy(&e, data, sizeof(e));
      if (e.error == 0) return std::optional<int32_t>();
      return make_error(std::string(what) + " refused: " + errno_text(-e.error));
    }
    if (h.nlmsg_type != RTM_NEWNSID) continue;
    for (size_t at = NLMSG_ALIGN(sizeof(rtgenmsg)); at + sizeof(rtattr) <= data_len;) {
      rtattr a{};
      std::memcpy(&a, data + at, sizeof(a));
      const auto attr_len = static_cast<size_t>(a.rta_len);
      if (attr_len < sizeof(rtattr) || attr_len > data_len - at) break;
      if (a.rta_type == NETNSA_NSID && attr_len >= RTA_LENGTH(sizeof(int32_t))) {
        int32_t id = 0;
        std::memcpy(&id, data + at + RTA_LENGTH(0), sizeof(id));
        return std::optional<int32_t>(id);
      }
      at += RTA_ALIGN(attr_len);
    }
    return make_error(std::string(what) + ": the answer holds no id");
  }
  return make_error(std::string(what) + ": an answer of neither an id nor an error");
}

}  // namespace

Result<int32_t> netns_id_of(const std::string& ns_file, uint32_t inode) {
  Fd ns(open(ns_file.c_str(), O_RDONLY | O_CLOEXEC));
  if (!ns.valid()) return make_error("cannot open " + ns_file + ": " + errno_text(errno));
  struct stat st {};
  if (fstat(ns.get(), &st) != 0)
    return make_error("cannot stat " + ns_file + ": " + errno_text(errno));
  if (st.st_ino != inode) {
    return make_error(ns_file + " is net:[" + std::to_string(st.st_ino) + "] by now, not net:[" +
                      std::to_string(inode) + "]");
  }
  Fd sock(socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE));
  if (!sock.valid()) return make_error("cannot open a route netlink socket: " + errno_text(errno));
  const auto get = [&]() -> Result<int32_t> {
    auto id = exchange(sock.get(), nsid_request(RTM_GETNSID, ns.get(), std::nullopt),
                       "the namespace id request");
    if (!id) return id.error();
    if (!*id) return make_error("the namespace id request was acknowledged, not answered");
    return **id;
  };
  auto id = get();
  if (!id || *id >= 0) return id;
  // None yet. Another may give it one meanwhile: then the kernel refuses
  // ours (EEXIST does not say so on every kernel), and the next read finds it.
  auto given = exchange(sock.get(), nsid_request(RTM_NEWNSID, ns.get(), kKernelPicks),
                        "the namespace id assignment");
  id = get();
  if (!id) return id.error();
  if (*id < 0) {
    return make_error(ns_file + " has no id in this namespace" +
                      (given ? std::string() : ": " + given.error().message));
  }
  return id;
}

}  // namespace edgeshed
