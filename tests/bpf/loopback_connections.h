// Real TCP connections on the loopback of a network namespace of the test's
// own, for the programs that read sockets: the request filter
// (refuse_request_test.cpp) and the idle walks (reclaim_idle_test.cpp).
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "bpf/dataplane_fixture.h"
#include "common/fd.h"
#include "dataplane/events.h"

namespace edgeshed::testing {

// IPv4's address on that loopback: 127.0.0.1 would be a martian to a frame
// injected there, whatever route_localnet says.
inline constexpr const char* kTestV4 = "192.0.2.1";
inline constexpr std::string_view kRequest = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
inline constexpr std::string_view kAnswer = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n";

uint16_t local_port(int fd);
// Whether a read of the socket failed with err within `wait` (a read that
// does not block says so).
bool read_fails_with(int fd, int err,
                     std::chrono::milliseconds wait = std::chrono::milliseconds(2000));
inline bool was_reset(int fd, std::chrono::milliseconds wait = std::chrono::milliseconds(2000)) {
  return read_fails_with(fd, ECONNRESET, wait);
}

// The calling thread in a network namespace of its own, loopback up with
// kTestV4 and accept_local on (a frame from a local address injected on
// loopback is not a martian); back in the first one when it goes. Check
// entered() after construction.
class PrivateLoopback {
 public:
  PrivateLoopback();
  ~PrivateLoopback();
  PrivateLoopback(const PrivateLoopback&) = delete;
  PrivateLoopback& operator=(const PrivateLoopback&) = delete;
  bool entered() const { return entered_; }

 private:
  Fd host_netns_;
  bool entered_ = false;
};

// The data plane writes an event of every decision (100 a second per CPU at
// the most) and reader hands each to events, when polled.
void read_every_event(const DataplaneFixture& dp, std::optional<EventReader>& reader,
                      std::vector<edgeshed_event>& events);

struct Connection {
  Fd client;
  Fd server;
};

// Sockets of one family on that loopback: kTestV4, or ::1.
class LoopbackSockets {
 public:
  explicit LoopbackSockets(int family) : family_(family) {}
  int family() const { return family_; }
  sockaddr_storage address(uint16_t port) const;
  socklen_t address_len() const;
  Fd listen_on(uint16_t* port) const;
  Fd connect_to(uint16_t port) const;
  // A connection accepted from listener, established and known to the
  // tracker when it returns.
  Connection open(int listener, uint16_t port) const;

 private:
  int family_;
};

// The client sends kRequest `times` times in one write, then waits 20 ms.
void send_request(const Connection& c, int times = 1);
// The server reads one kRequest.
void read_request(const Connection& c);
// The server sends kAnswer and the client reads it.
void answer_request(const Connection& c);
// One request read and answered, the answer read and acknowledged.
void serve_one_request(const Connection& c);
// Two requests sent apart, the second while the first is in service (as
// pipelining or two HTTP/2 streams would), both read by the server, the
// first answered and the answer acknowledged (past the delayed ACK's
// longest wait).
void carry_two_requests_at_once(const Connection& c);

}  // namespace edgeshed::testing
