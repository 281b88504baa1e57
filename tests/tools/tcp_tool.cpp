// Tiny TCP client and server for the namespace tests.
//   tcp_tool serve PORT [SECONDS]        accept and close, until SECONDS pass
//   tcp_tool connect ADDR PORT [TIMEOUT_MS]
//   tcp_tool hold ADDR PORT N SECONDS [CONNECT_TIMEOUT_MS]
// connect prints one line, "ok MS", "refused MS", "reset MS" or "timeout MS",
// and exits 0 for ok, 3 refused, 4 reset, 5 timeout, 1 for anything else.
//
// hold: the idle crowd. Opens N connections (at most 256 connects pending at a
// time, each given CONNECT_TIMEOUT_MS, default 3000), sends nothing on them,
// and prints once every attempt has ended:
//   opened N established E refused R reset X timeout T error O ms M
// Then holds the established ones, idle, until SECONDS have passed since its
// start or until SIGUSR1, watching each for the peer's close (FIN) or a
// reset, and prints:
//   held S open K closed C reset Z
// and exits 0 (1 for a usage or system error). N <= 50000, SECONDS <= 600:
// it always stops by itself. It raises its own descriptor limit to the hard
// limit, and says so if that is below N.
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

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

// The numeric HOST and PORT as a socket address; null (said on stderr) when
// they are not one. The caller frees it.
addrinfo* numeric_address(const char* host, const char* port) {
  addrinfo hints{}, *res = nullptr;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST;
  if (getaddrinfo(host, port, &hints, &res) != 0) {
    std::fprintf(stderr, "bad address %s\n", host);
    return nullptr;
  }
  return res;
}

int connect_once(const char* host, const char* port, int timeout_ms) {
  addrinfo* res = numeric_address(host, port);
  if (!res) return 1;
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

volatile std::sig_atomic_t g_report_now = 0;
void on_usr1(int /*signal*/) { g_report_now = 1; }

// What a non-blocking peek says of an established, idle connection.
enum class Liveness { kOpen, kClosed, kReset };
Liveness liveness(int fd) {
  char byte;
  ssize_t n = recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n > 0) return Liveness::kOpen;  // data from the server: still open
  if (n == 0) return Liveness::kClosed;
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return Liveness::kOpen;
  return Liveness::kReset;  // ECONNRESET, or any other error: the connection is gone
}

int hold(const char* host, const char* port, int n, int seconds, int connect_timeout_ms) {
  constexpr int kWindow = 256;  // connects pending at once
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    setrlimit(RLIMIT_NOFILE, &lim);
  }
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < static_cast<rlim_t>(n) + 16) {
    std::fprintf(stderr, "hold: descriptor limit %lu is below %d connections\n",
                 static_cast<unsigned long>(lim.rlim_cur), n);
    return 1;
  }
  addrinfo* res = numeric_address(host, port);
  if (!res) return 1;
  struct sigaction sa {};
  sa.sa_handler = on_usr1;  // no SA_RESTART: poll returns EINTR
  sigaction(SIGUSR1, &sa, nullptr);

  const auto t0 = Clock::now();
  const auto end = t0 + std::chrono::seconds(seconds);
  std::vector<int> held;
  int refused = 0, reset = 0, timeout = 0, error = 0, started = 0;
  struct Pending {
    int fd;
    Clock::time_point deadline;
  };
  std::vector<Pending> pending;
  while ((started < n || !pending.empty()) && Clock::now() < end && !g_report_now) {
    while (started < n && static_cast<int>(pending.size()) < kWindow) {
      ++started;
      int fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      if (fd < 0) {
        ++error;
        continue;
      }
      if (connect(fd, res->ai_addr, res->ai_addrlen) == 0) {
        held.push_back(fd);
      } else if (errno == EINPROGRESS) {
        pending.push_back({fd, Clock::now() + std::chrono::milliseconds(connect_timeout_ms)});
      } else {
        errno == ECONNREFUSED ? ++refused : ++error;
        close(fd);
      }
    }
    std::vector<pollfd> p;
    p.reserve(pending.size());
    for (const Pending& c : pending) p.push_back({c.fd, POLLOUT, 0});
    if (poll(p.data(), p.size(), 20) < 0 && errno != EINTR) break;
    const auto now = Clock::now();
    std::vector<Pending> still;
    for (size_t i = 0; i < pending.size(); ++i) {
      const int fd = pending[i].fd;
      if (p[i].revents == 0) {
        if (now < pending[i].deadline) {
          still.push_back(pending[i]);
        } else {
          ++timeout;
          close(fd);
        }
        continue;
      }
      int err = 0;
      socklen_t len = sizeof(err);
      getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      if (err == 0) {
        held.push_back(fd);
        continue;
      }
      if (err == ECONNREFUSED) {
        ++refused;
      } else if (err == ECONNRESET) {
        ++reset;
      } else if (err == ETIMEDOUT) {
        ++timeout;
      } else {
        ++error;
      }
      close(fd);
    }
    pending.swap(still);
  }
  freeaddrinfo(res);
  // Stopped early (time, SIGUSR1): what was not even tried, or still
  // pending, counts as timed out.
  timeout += n - started + static_cast<int>(pending.size());
  for (const Pending& c : pending) close(c.fd);
  std::printf("opened %d established %zu refused %d reset %d timeout %d error %d ms %.0f\n", n,
              held.size(), refused, reset, timeout, error, ms_since(t0));
  std::fflush(stdout);

  // The hold: every established connection watched for its end, none written to.
  int closed = 0, resets = 0;
  std::vector<int> open = held;
  while (Clock::now() < end && !g_report_now && !open.empty()) {
    std::vector<pollfd> p;
    p.reserve(open.size());
    for (int fd : open) p.push_back({fd, POLLRDHUP, 0});
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now()).count();
    if (poll(p.data(), p.size(), static_cast<int>(std::clamp<int64_t>(left, 0, 200))) <= 0) {
      continue;
    }
    std::vector<int> still;
    for (size_t i = 0; i < p.size(); ++i) {
      Liveness l = p[i].revents ? liveness(p[i].fd) : Liveness::kOpen;
      // POLLRDHUP with nothing to read is the peer's FIN.
      if (l == Liveness::kOpen && (p[i].revents & (POLLRDHUP | POLLHUP))) l = Liveness::kClosed;
      if (l == Liveness::kOpen) {
        still.push_back(p[i].fd);
      } else {
        l == Liveness::kClosed ? ++closed : ++resets;
      }
    }
    open.swap(still);
  }
  // The last look, for what changed since the last poll.
  size_t open_now = 0;
  for (int fd : open) {
    switch (liveness(fd)) {
      case Liveness::kOpen:
        ++open_now;
        break;
      case Liveness::kClosed:
        ++closed;
        break;
      case Liveness::kReset:
        ++resets;
        break;
    }
  }
  std::printf("held %.1f open %zu closed %d reset %d\n", ms_since(t0) / 1000, open_now, closed,
              resets);
  std::fflush(stdout);
  for (int fd : held) close(fd);
  return 0;
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
  } else if (cmd == "hold" && argc >= 6) {
    const auto n = arg(4, 0);
    const auto seconds = arg(5, 0);
    const auto timeout_ms = arg(6, 3000);
    if (n && seconds && timeout_ms && *n >= 1 && *n <= 50000 && *seconds >= 1 && *seconds <= 600 &&
        *timeout_ms >= 1) {
      return hold(argv[2], argv[3], *n, *seconds, *timeout_ms);
    }
  }
  std::fprintf(stderr,
               "usage: tcp_tool serve PORT [SECONDS] | connect ADDR PORT [TIMEOUT_MS]\n"
               "       | hold ADDR PORT N(1..50000) SECONDS(1..600) [CONNECT_TIMEOUT_MS]\n");
  return 2;
}
