// Blocking-style TCP I/O with a deadline, for the probes' connects and the
// agent-check server (HTTP goes through libcurl: signals/http_client.h).
// Every wait is a poll() bounded by the deadline of the whole operation (a
// server that trickles one byte a second cannot stretch it) and by a cancel
// fd, so that a source being destroyed does not wait for its timeout.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/fd.h"
#include "common/result.h"

namespace edgeshed::signals {

struct SocketAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;

  int family() const { return storage.ss_family; }
  const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&storage); }
  // "192.0.2.1:80", "[2001:db8::1]:80"
  std::string to_string() const;
  // "192.0.2.1", "2001:db8::1"
  std::string ip() const;
  uint16_t port() const;
};

// An IPv4 or IPv6 literal, the latter with or without brackets. No name
// lookup: the error says the text is not an address literal.
Result<SocketAddress> parse_ip_address(std::string_view literal, uint16_t port);

// Wakes a worker thread out of its waits: once cancel() is called, every
// wait given fd() fails at once. From any thread.
class Canceller {
 public:
  Canceller();
  int fd() const { return fd_.get(); }  // -1 if eventfd failed: waits end at their deadline
  void cancel();

 private:
  Fd fd_;
};

struct IoLimits {
  std::chrono::steady_clock::time_point deadline;
  std::chrono::nanoseconds timeout{0};  // what the deadline was set from, for messages
  int cancel_fd = -1;

  static IoLimits from_now(std::chrono::nanoseconds timeout, int cancel_fd) {
    return {std::chrono::steady_clock::now() + timeout, timeout, cancel_fd};
  }
};

// Waits until fd has one of `events`. `doing` completes "timed out after 1s
// <doing>".
Status wait_for(int fd, short events, const IoLimits& limits, std::string_view doing);

// A connected non-blocking TCP socket; with `from`, bound to that local
// address first (port 0: any port).
Result<Fd> tcp_connect(const SocketAddress& to, const std::optional<SocketAddress>& from,
                       const IoLimits& limits);

Status send_all(int fd, std::string_view data, const IoLimits& limits, std::string_view peer);

// Up to `size` bytes, at least one; 0 means the peer closed the connection.
Result<std::size_t> receive_some(int fd, char* buffer, std::size_t size, const IoLimits& limits,
                                 std::string_view doing);

}  // namespace edgeshed::signals
