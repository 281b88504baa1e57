// Tiny TCP client and server for the namespace tests.
//   tcp_tool serve PORT [SECONDS]        accept and close, until SECONDS pass
//   tcp_tool connect ADDR PORT [TIMEOUT_MS]
// connect prints one line, "ok MS", "refused MS", "reset MS" or "timeout MS",
// and exits 0 for ok, 3 refused, 4 reset, 5 timeout, 1 for anything else.
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

int serve(int port, int seconds) {
  int fd = socket(AF_INET6, SOCK_STREAM, 0);
  int on = 1, off = 0;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
  setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
  sockaddr_in6 a{};
  a.sin6_family = AF_INET6;
  a.sin6_port = htons(static_cast<uint16_t>(port));
  a.sin6_addr = in6addr_any;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) || listen(fd, 128)) {
    std::perror("serve");
    return 1;
  }
  auto deadline = Clock::now() + std::chrono::seconds(seconds);
  while (Clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 100) > 0) {
      int c = accept(fd, nullptr, nullptr);
      if (c >= 0) {
        (void)write(c, "hello\n", 6);
        close(c);
      }
    }
  }
  return 0;
}

int connect_once(const char* host, const char* port, int timeout_ms) {
  addrinfo hints{}, *res = nullptr;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST;
  if (getaddrinfo(host, port, &hints, &res) != 0) {
    std::fprintf(stderr, "bad address %s\n", host);
    return 1;
  }
  int fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK, 0);
  auto t0 = Clock::now();
  int rc = connect(fd, res->ai_addr, res->ai_addrlen);
  freeaddrinfo(res);
  int err = rc == 0 ? 0 : errno;
  if (err == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    if (poll(&p, 1, timeout_ms) <= 0) {
      std::printf("timeout %.2f\n", ms_since(t0));
      return 5;
    }
    socklen_t len = sizeof(err);
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
  }
  double ms = ms_since(t0);
  close(fd);
  switch (err) {
    case 0:
      std::printf("ok %.2f\n", ms);
      return 0;
    case ECONNREFUSED:
      std::printf("refused %.2f\n", ms);
      return 3;
    case ECONNRESET:
      std::printf("reset %.2f\n", ms);
      return 4;
    default:
      std::printf("error %s\n", std::strerror(err));
      return 1;
  }
}

// A whole decimal number, or nothing: atoi took "80x" as 80 and "x" as 0.
std::optional<int> number(const char* text) {
  int v = 0;
  const char* const end = text + std::strlen(text);
  const auto [p, ec] = std::from_chars(text, end, v);
  if (ec != std::errc() || p != end) return std::nullopt;
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string cmd = argc > 1 ? argv[1] : "";
  // Argument i as a number, or fallback when it is not given.
  auto arg = [&](int i, int fallback) {
    return i < argc ? number(argv[i]) : std::optional<int>(fallback);
  };
  if (cmd == "serve" && argc >= 3) {
    const auto port = arg(2, 0);
    const auto seconds = arg(3, 60);
    if (port && seconds) return serve(*port, *seconds);
  } else if (cmd == "connect" && argc >= 4) {
    if (const auto timeout_ms = arg(4, 1000)) return connect_once(argv[2], argv[3], *timeout_ms);
  }
  std::fprintf(stderr, "usage: tcp_tool serve PORT [SECONDS] | connect ADDR PORT [TIMEOUT_MS]\n");
  return 2;
}
