// Loopback servers for the scrape and probe tests: an HTTP server whose
// answers a test scripts (slow, trickling, oversized, never), counting the
// connections it accepts, and a listener whose accept queue is kept full.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/fd.h"

namespace edgeshed::testing {

class TestHttpServer {
 public:
  struct Response {
    std::string bytes;                   // sent as is: status line, headers and body
    std::chrono::milliseconds delay{0};  // before the first byte
    std::chrono::milliseconds drip{0};   // between bytes: a trickling server
    bool never = false;                  // hold the connection, never answer
    bool close_after = false;            // close without saying so in a header
  };
  // Called with the request head (request line and headers) of each request.
  using Handler = std::function<Response(const std::string& head)>;

  explicit TestHttpServer(Handler handler, bool ipv6 = false);
  ~TestHttpServer();

  uint16_t port() const { return port_; }
  std::string url(const std::string& path) const;
  int connections() const { return connections_.load(); }
  int requests() const { return requests_.load(); }

  // "HTTP/1.1 200 OK" with a Content-Length body.
  static Response ok(const std::string& body, const std::string& extra_headers = "");
  static Response status(int code, const std::string& reason);

 private:
  void accept_loop();
  void serve(int fd);
  // Sleeps, unless the server stops first; false if it did.
  bool pause(std::chrono::milliseconds duration);

  Handler handler_;
  bool ipv6_;
  uint16_t port_ = 0;  // before listener_, which sets it
  Fd listener_;
  Fd stop_event_;
  std::atomic<int> connections_{0};
  std::atomic<int> requests_{0};
  std::mutex mutex_;
  std::condition_variable stopped_cv_;
  bool stopping_ = false;
  std::vector<int> open_fds_;
  std::vector<std::thread> threads_;
  std::thread acceptor_;
};

// A listener with a backlog of 0 that never accepts, with its accept queue
// filled by connections of its own: further SYNs are dropped, so connecting
// to it hangs until the client gives up.
class FullBacklogListener {
 public:
  FullBacklogListener();
  uint16_t port() const { return port_; }

 private:
  uint16_t port_ = 0;  // before listener_, which sets it
  Fd listener_;
  std::vector<Fd> fillers_;
};

// A loopback TCP port with nothing listening on it.
uint16_t closed_port();

}  // namespace edgeshed::testing
