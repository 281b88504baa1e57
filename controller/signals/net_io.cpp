#include "signals/net_io.h"

#include <arpa/inet.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/duration.h"

namespace edgeshed::signals {
namespace {

std::string errno_text(int err) { return std::strerror(err); }

}  // namespace

std::string SocketAddress::ip() const {
  char text[INET6_ADDRSTRLEN] = {};
  if (family() == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&storage)->sin_addr, text,
              sizeof(text));
  } else if (family() == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_addr, text,
              sizeof(text));
  }
  return text;
}

uint16_t SocketAddress::port() const {
  if (family() == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&storage)->sin_port);
  if (family() == AF_INET6) {
    return ntohs(reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_port);
  }
  return 0;
}

std::string SocketAddress::to_string() const {
  if (family() == AF_INET) return ip() + ":" + std::to_string(port());
  if (family() == AF_INET6) return "[" + ip() + "]:" + std::to_string(port());
  return "(no address)";
}

Result<SocketAddress> parse_ip_address(std::string_view literal, uint16_t port) {
  std::string text(literal);
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') {
    text = text.substr(1, text.size() - 2);
  }
  SocketAddress address;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&address.storage);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&address.storage);
  if (inet_pton(AF_INET, text.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    address.length = sizeof(sockaddr_in);
    return address;
  }
  if (inet_pton(AF_INET6, text.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    address.length = sizeof(sockaddr_in6);
    return address;
  }
  return make_error("'" + std::string(literal) + "' is not an IPv4 or IPv6 address");
}

Canceller::Canceller() : fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

void Canceller::cancel() {
  if (!fd_.valid()) return;
  uint64_t one = 1;
  // Only fails if the counter would overflow, which a counter of ones never does.
  [[maybe_unused]] ssize_t n = ::write(fd_.get(), &one, sizeof(one));
}

Status wait_for(int fd, short events, const IoLimits& limits, std::string_view doing) {
  for (;;) {
    auto left = limits.deadline - std::chrono::steady_clock::now();
    if (left <= std::chrono::nanoseconds(0)) {
      return make_error("timed out after " + format_duration(limits.timeout) + " " +
                        std::string(doing));
    }
    // Round up: a 0 ms poll would spin through the last millisecond.
    auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
    pollfd fds[2] = {{fd, events, 0}, {limits.cancel_fd, POLLIN, 0}};
    int n = ::poll(fds, limits.cancel_fd >= 0 ? 2 : 1, static_cast<int>(ms));
    if (n < 0) {
      if (errno == EINTR) continue;
      return make_error("poll: " + errno_text(errno));
    }
    if (limits.cancel_fd >= 0 && fds[1].revents != 0) return make_error("cancelled");
    // Errors and hangups count as ready: the next call on fd reports them.
    if (fds[0].revents != 0) return {};
  }
}

Result<Fd> tcp_connect(const SocketAddress& to, const std::optional<SocketAddress>& from,
                       const IoLimits& limits) {
  const std::string peer = to.to_string();
  Fd fd(::socket(to.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return make_error("socket: " + errno_text(errno));
  int one = 1;
  // Requests are one small write; Nagle would only delay them.
  setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  if (from) {
    if (from->family() != to.family()) {
      return make_error("source " + from->ip() + " and " + peer + " are of different families");
    }
    // With port 0, pick the port at connect time, from the 4-tuple, instead
    // of reserving one per bound socket: a probe every second would
    // otherwise hold ports in TIME_WAIT that bind() cannot reuse.
    setsockopt(fd.get(), IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one));
    if (::bind(fd.get(), from->get(), from->length) != 0) {
      return make_error("bind to source " + from->ip() + ": " + errno_text(errno));
    }
  }
  if (::connect(fd.get(), to.get(), to.length) == 0) return fd;
  if (errno != EINPROGRESS) return make_error("connect to " + peer + ": " + errno_text(errno));
  if (auto s = wait_for(fd.get(), POLLOUT, limits, "connecting to " + peer); !s) return s.error();
  int err = 0;
  socklen_t len = sizeof(err);
  if (getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
  if (err != 0) return make_error("connect to " + peer + ": " + errno_text(err));
  return fd;
}

Status send_all(int fd, std::string_view data, const IoLimits& limits, std::string_view peer) {
  while (!data.empty()) {
    // MSG_NOSIGNAL: a peer that closed must give EPIPE, not kill the daemon.
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (auto s = wait_for(fd, POLLOUT, limits, "sending to " + std::string(peer)); !s) return s;
      continue;
    }
    return make_error("send to " + std::string(peer) + ": " + errno_text(errno));
  }
  return {};
}

Result<std::size_t> receive_some(int fd, char* buffer, std::size_t size, const IoLimits& limits,
                                 std::string_view doing) {
  for (;;) {
    ssize_t n = ::recv(fd, buffer, size, 0);
    if (n >= 0) return static_cast<std::size_t>(n);
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (auto s = wait_for(fd, POLLIN, limits, doing); !s) return s.error();
      continue;
    }
    return make_error("receive: " + errno_text(errno));
  }
}

}  // namespace edgeshed::signals
