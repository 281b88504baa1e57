#include "signals_test_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>

namespace edgeshed::testing {
namespace {

Fd listen_loopback(bool ipv6, int backlog, uint16_t& port) {
  Fd fd(::socket(ipv6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) throw std::runtime_error("socket failed");
  int one = 1;
  setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_storage storage{};
  socklen_t length = 0;
  if (ipv6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&storage);
    a->sin6_family = AF_INET6;
    a->sin6_addr = in6addr_loopback;
    length = sizeof(*a);
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&storage);
    a->sin_family = AF_INET;
    a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    length = sizeof(*a);
  }
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&storage), length) != 0 ||
      ::listen(fd.get(), backlog) != 0 ||
      getsockname(fd.get(), reinterpret_cast<sockaddr*>(&storage), &length) != 0) {
    throw std::runtime_error(std::string("listen failed: ") + std::strerror(errno));
  }
  port = ntohs(ipv6 ? reinterpret_cast<sockaddr_in6*>(&storage)->sin6_port
                    : reinterpret_cast<sockaddr_in*>(&storage)->sin_port);
  return fd;
}

}  // namespace

TestHttpServer::TestHttpServer(Handler handler, bool ipv6)
    : handler_(std::move(handler)),
      ipv6_(ipv6),
      listener_(listen_loopback(ipv6, 64, port_)),
      stop_event_(eventfd(0, EFD_CLOEXEC)),
      acceptor_([this] { accept_loop(); }) {}

TestHttpServer::~TestHttpServer() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    // Wakes connection threads blocked in recv or send.
    for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
  }
  stopped_cv_.notify_all();
  uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(stop_event_.get(), &one, sizeof(one));
  acceptor_.join();
  for (std::thread& t : threads_) t.join();
}

std::string TestHttpServer::url(const std::string& path) const {
  return std::string("http://") + (ipv6_ ? "[::1]" : "127.0.0.1") + ":" + std::to_string(port_) +
         path;
}

TestHttpServer::Response TestHttpServer::ok(const std::string& body,
                                            const std::string& extra_headers) {
  Response r;
  r.bytes = "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: " +
            std::to_string(body.size()) + "\r\n" + extra_headers + "\r\n" + body;
  return r;
}

TestHttpServer::Response TestHttpServer::status(int code, const std::string& reason) {
  Response r;
  r.bytes = "HTTP/1.1 " + std::to_string(code) + " " + reason + "\r\nContent-Length: 0\r\n\r\n";
  return r;
}

bool TestHttpServer::pause(std::chrono::milliseconds duration) {
  std::unique_lock lock(mutex_);
  return !stopped_cv_.wait_for(lock, duration, [this] { return stopping_; });
}

void TestHttpServer::accept_loop() {
  for (;;) {
    pollfd fds[2] = {{listener_.get(), POLLIN, 0}, {stop_event_.get(), POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) continue;
    if (fds[1].revents != 0) return;
    int fd = ::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    std::lock_guard lock(mutex_);
    if (stopping_) {
      ::close(fd);
      return;
    }
    connections_.fetch_add(1);
    open_fds_.push_back(fd);
    threads_.emplace_back([this, fd] { serve(fd); });
  }
}

void TestHttpServer::serve(int fd) {
  std::string buffer;
  char chunk[4096];
  for (;;) {
    std::size_t end = buffer.find("\r\n\r\n");
    if (end == std::string::npos) {
      ssize_t n = ::recv(fd, chunk, sizeof(chunk), 0);
      if (n <= 0) break;
      buffer.append(chunk, static_cast<std::size_t>(n));
      continue;
    }
    std::string head = buffer.substr(0, end + 4);
    buffer.erase(0, end + 4);
    requests_.fetch_add(1);
    Response response = handler_(head);
    if (response.never) {
      pause(std::chrono::hours(1));
      break;
    }
    if (!pause(response.delay)) break;
    bool sent = true;
    if (response.drip.count() > 0) {
      for (char c : response.bytes) {
        if (::send(fd, &c, 1, MSG_NOSIGNAL) != 1 || !pause(response.drip)) {
          sent = false;
          break;
        }
      }
    } else {
      sent = ::send(fd, response.bytes.data(), response.bytes.size(), MSG_NOSIGNAL) ==
             static_cast<ssize_t>(response.bytes.size());
    }
    if (!sent || response.close_after) break;
  }
  std::lock_guard lock(mutex_);
  // Closed under the lock so that the destructor never shuts down a number
  // the kernel has already given to another socket.
  std::erase(open_fds_, fd);
  ::close(fd);
}

FullBacklogListener::FullBacklogListener() : listener_(listen_loopback(false, 0, port_)) {
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port_);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  for (int i = 0; i < 3; ++i) {
    Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    // Non-blocking: EINPROGRESS is the answer; the backlog completes the handshake.
    (void)::connect(fd.get(), reinterpret_cast<sockaddr*>(&to), sizeof(to));
    fillers_.push_back(std::move(fd));
  }
  // Let the handshakes that fit complete, so the queue is full for the test.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

uint16_t closed_port() {
  uint16_t port = 0;
  // Bound then closed: nothing listens there until the kernel reuses it.
  { Fd fd = listen_loopback(false, 1, port); }
  return port;
}

}  // namespace edgeshed::testing
