// refserver: the service of the edgeshed lab, built to collapse under overload
// the way a naive server does.
//
// It has a fixed number of worker slots and accepts a connection only when a
// slot is free, so while every worker is busy new connections wait in the
// kernel's accept queue (--backlog, large by default). That queue is where
// latency explodes under overload, and it is what edgeshed's in-flight count
// sees: established connections on the port, accepted or not. A request holds
// its slot for the service time (a sleep: the lab host has two cores, and the
// point is waiting, not CPU) and the response is "ok\n".
//
// Threads: one dispatcher (accepts, and watches idle keep-alive connections),
// --workers workers, one for /stream connections (which hold no slot) and one
// for /metrics, which therefore answers even when every worker is stuck.
#include "common/fd.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "refserver_http.h"
#include "refserver_metrics.h"
#include "tool_main.h"

namespace edgeshed::refserver {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr auto kReadTimeout = std::chrono::seconds(5);
constexpr auto kWriteTimeout = std::chrono::seconds(5);
constexpr auto kStreamTick = milliseconds(10);

// The project's owner of a file descriptor.
using UniqueFd = edgeshed::Fd;

struct Options {
  std::vector<uint16_t> ports;
  int workers = 10;
  double service_ms = 20;
  std::string service_dist = "fixed";
  ServiceDist dist = ServiceDist::kFixed;
  int metrics_port = 9100;
  int backlog = 4096;
  double duration_s = 120;
};

// Set once, seen by every thread: the eventfd stays readable after it, so any
// poll set that holds it wakes, and sleeps wait on the condition variable.
class Stop {
 public:
  Stop() : fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

  int fd() const { return fd_.get(); }
  bool is_set() const { return set_.load(); }

  void set() {
    {
      std::lock_guard lock(mu_);
      set_ = true;
    }
    cv_.notify_all();
    uint64_t one = 1;
    (void)!write(fd_.get(), &one, sizeof(one));
  }

  // False if stopped before `t`.
  bool sleep_until(Clock::time_point t) {
    std::unique_lock lock(mu_);
    return !cv_.wait_until(lock, t, [this] { return set_.load(); });
  }

 private:
  UniqueFd fd_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<bool> set_{false};
};

// Waits for `events` on fd, or for the stop. False on stop or at the deadline.
bool wait_for(int fd, short events, Clock::time_point deadline, const Stop& stop) {
  while (true) {
    auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
    if (left <= 0 || stop.is_set()) return false;
    pollfd p[2] = {{fd, events, 0}, {stop.fd(), POLLIN, 0}};
    int n = poll(p, 2, static_cast<int>(std::min<int64_t>(left, 1000)));
    if (n < 0 && errno != EINTR) return false;
    if (p[1].revents) return false;
    if (n > 0) return true;
  }
}

bool write_all(int fd, std::string_view data, Clock::time_point deadline, const Stop& stop) {
  while (!data.empty()) {
    ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && errno == EAGAIN) {
      if (!wait_for(fd, POLLOUT, deadline, stop)) return false;
    } else {
      return false;
    }
  }
  return true;
}

// Reads into `buf` until it holds a whole request. False on EOF, error,
// timeout or stop; a malformed request gets a 400 first.
bool read_request(int fd, std::string& buf, Request* req, Clock::time_point deadline,
                  const Stop& stop) {
  char chunk[8192];
  while (true) {
    *req = parse_request(buf);
    if (req->state == Request::kComplete) return true;
    if (req->state == Request::kMalformed) {
      write_all(fd, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                deadline, stop);
      return false;
    }
    ssize_t n = recv(fd, chunk, sizeof(chunk), MSG_DONTWAIT);
    if (n > 0) {
      buf.append(chunk, static_cast<size_t>(n));
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      if (!wait_for(fd, POLLIN, deadline, stop)) return false;
    } else {
      return false;  // closed by the client, or failed
    }
  }
}

// IPv6 with IPV6_V6ONLY off takes IPv4 too; plain IPv4 if the host has no IPv6.
UniqueFd listen_on(uint16_t port, int backlog, std::string* error) {
  UniqueFd fd(socket(AF_INET6, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  bool v6 = static_cast<bool>(fd);
  if (!v6) fd = UniqueFd(socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) {
    *error = std::string("socket: ") + std::strerror(errno);
    return {};
  }
  int on = 1, off = 0;
  setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
  int rc;
  if (v6) {
    setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_port = htons(port);
    a.sin6_addr = in6addr_any;
    rc = bind(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a));
  } else {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    rc = bind(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a));
  }
  if (rc != 0 || listen(fd.get(), backlog) != 0) {
    *error = "port " + std::to_string(port) + ": " + std::strerror(errno);
    return {};
  }
  return fd;
}

struct Conn {
  UniqueFd fd;
  std::string buf;             // bytes read and not yet consumed: the start of the next request
  Clock::time_point ready_at;  // accept, or the next keep-alive request's arrival
};

struct Stream {
  UniqueFd fd;
  Clock::time_point start;
  uint64_t seq = 0;
  std::string pending;  // the unsent tail of a line, so that lines never interleave
};

const std::string kOkClose =
    "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n";
const std::string kOkKeepAlive =
    "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: keep-alive\r\n\r\nok\n";
const std::string kStreamHead =
    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n";

class Server {
 public:
  Server(const Options& o, Stop& stop)
      : o_(o), stop_(stop), back_efd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

  bool listen_all(std::string* error) {
    for (uint16_t port : o_.ports) {
      UniqueFd fd = listen_on(port, o_.backlog, error);
      if (!fd) return false;
      listeners_.push_back({port, std::move(fd)});
    }
    if (o_.metrics_port > 0) {
      metrics_fd_ = listen_on(static_cast<uint16_t>(o_.metrics_port), 64, error);
      if (!metrics_fd_) {
        *error = "metrics " + *error;
        return false;
      }
    }
    return true;
  }

  void start() {
    threads_.emplace_back([this] { dispatch_loop(); });
    for (int i = 0; i < o_.workers; ++i) {
      threads_.emplace_back([this, i] { worker_loop(static_cast<uint64_t>(i) + 1); });
    }
    threads_.emplace_back([this] { stream_loop(); });
    if (metrics_fd_) threads_.emplace_back([this] { metrics_loop(); });
  }

  void shutdown() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    stop_.set();
    free_cv_.notify_all();
    job_cv_.notify_all();
    for (std::thread& t : threads_) t.join();
    threads_.clear();
  }

  uint64_t requests() const { return requests_.load(); }

 private:
  enum class Served { kClose, kKeepAlive, kStream };

  static constexpr uint64_t kStopTag = 1ULL << 62;
  static constexpr uint64_t kBackTag = kStopTag + 1;
  static constexpr uint64_t kConnBit = 1ULL << 63;

  // Accepts only while a slot is free: until then connections stay queued in
  // the kernel, which is the queue this server is meant to have.
  void dispatch_loop() {
    UniqueFd ep(epoll_create1(EPOLL_CLOEXEC));
    auto add = [&](int fd, uint32_t events, uint64_t tag, int op = EPOLL_CTL_ADD) {
      epoll_event ev{};
      ev.events = events;
      ev.data.u64 = tag;
      return epoll_ctl(ep.get(), op, fd, &ev) == 0;
    };
    for (size_t i = 0; i < listeners_.size(); ++i) add(listeners_[i].fd.get(), EPOLLIN, i);
    add(stop_.fd(), EPOLLIN, kStopTag);
    add(back_efd_.get(), EPOLLIN, kBackTag);
    constexpr uint32_t kIdleEvents = EPOLLIN | EPOLLRDHUP | EPOLLONESHOT;
    std::unordered_map<int, std::unique_ptr<Conn>> idle;  // keep-alive, between requests
    std::mt19937_64 rng(0x5eed);
    std::vector<epoll_event> events(64);

    while (true) {
      int free;
      {
        std::unique_lock lock(mu_);
        free_cv_.wait(lock, [&] { return in_use_ < o_.workers || stopping_; });
        if (stopping_) return;
        free = o_.workers - in_use_;
      }
      int n = epoll_wait(ep.get(), events.data(), std::min<int>(free, 64), -1);
      if (n < 0 && errno != EINTR) return;
      for (int i = 0; i < n; ++i) {
        uint64_t tag = events[i].data.u64;
        if (tag == kStopTag) return;
        if (tag == kBackTag) {
          uint64_t count;
          (void)!read(back_efd_.get(), &count, sizeof(count));
          std::vector<std::unique_ptr<Conn>> back;
          {
            std::lock_guard lock(back_mu_);
            back.swap(back_);
          }
          for (auto& c : back) {
            int fd = c->fd.get();
            if (add(fd, kIdleEvents, kConnBit | static_cast<uint64_t>(fd))) idle[fd] = std::move(c);
          }
        } else if (tag & kConnBit) {
          int fd = static_cast<int>(tag & ~kConnBit);
          auto it = idle.find(fd);
          if (it == idle.end()) continue;
          Conn& c = *it->second;
          char chunk[4096];
          ssize_t got = recv(fd, chunk, sizeof(chunk), MSG_DONTWAIT);
          if (got < 0 && (errno == EAGAIN || errno == EINTR)) {
            add(fd, kIdleEvents, tag, EPOLL_CTL_MOD);
          } else if (got <= 0) {
            idle.erase(it);  // the client closed (or reset) between requests
          } else {
            c.buf.append(chunk, static_cast<size_t>(got));
            if (free > 0) {
              c.ready_at = Clock::now();
              epoll_ctl(ep.get(), EPOLL_CTL_DEL, fd, nullptr);
              push(std::move(it->second));
              idle.erase(it);
              --free;
            } else {
              add(fd, kIdleEvents, tag, EPOLL_CTL_MOD);  // next round, when a slot frees
            }
          }
        } else {
          while (free > 0) {
            int lfd = pick_listener(rng);
            if (lfd < 0) break;
            int c = accept4(lfd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
            if (c < 0) {
              int err = errno;
              // Out of descriptors: back off rather than spin on a ready listener.
              if (err == EMFILE || err == ENFILE) {
                stop_.sleep_until(Clock::now() + milliseconds(10));
              }
              if (err == ECONNABORTED || err == EINTR) continue;
              break;
            }
            auto conn = std::make_unique<Conn>();
            conn->fd = UniqueFd(c);
            conn->ready_at = Clock::now();
            push(std::move(conn));
            --free;
          }
        }
      }
    }
  }

  // With several ports, the next connection comes from a port drawn with a
  // probability proportional to the length of its accept queue. Each port has
  // its own kernel queue: taking them in turn would serve a lightly loaded port
  // (a small critical class, say) at once while the others wait, a fair share
  // per port that a plain server does not have and that would hide what
  // edgeshed's classes are for; always taking the longest queue would starve
  // the short ones. Service in proportion to queue length gives every port
  // about the same wait, as if they all shared one queue. -1: all empty.
  int pick_listener(std::mt19937_64& rng) const {
    if (listeners_.size() == 1) return listeners_[0].fd.get();
    std::vector<uint32_t> lengths;
    uint64_t total = 0;
    for (const Listener& l : listeners_) {
      lengths.push_back(accept_queue_length(l.fd.get()));
      total += lengths.back();
    }
    if (total == 0) return -1;
    uint64_t draw = std::uniform_int_distribution<uint64_t>(0, total - 1)(rng);
    for (size_t i = 0; i < listeners_.size(); ++i) {
      if (draw < lengths[i]) return listeners_[i].fd.get();
      draw -= lengths[i];
    }
    return -1;
  }

  // For a listening socket, tcpi_unacked is the accept queue's length.
  static uint32_t accept_queue_length(int listen_fd) {
    tcp_info info{};
    socklen_t len = sizeof(info);
    return getsockopt(listen_fd, IPPROTO_TCP, TCP_INFO, &info, &len) == 0 ? info.tcpi_unacked : 0;
  }

  void push(std::unique_ptr<Conn> c) {
    {
      std::lock_guard lock(mu_);
      jobs_.push_back(std::move(c));
      ++in_use_;
      inflight_.store(in_use_);
    }
    job_cv_.notify_one();
  }

  void worker_loop(uint64_t seed) {
    std::mt19937_64 rng(seed);
    while (true) {
      std::unique_ptr<Conn> c;
      {
        std::unique_lock lock(mu_);
        job_cv_.wait(lock, [&] { return !jobs_.empty() || stopping_; });
        if (stopping_) return;
        c = std::move(jobs_.front());
        jobs_.pop_front();
      }
      Served served = serve(*c, rng);
      if (served == Served::kKeepAlive) {
        {
          std::lock_guard lock(back_mu_);
          back_.push_back(std::move(c));
        }
        uint64_t one = 1;
        (void)!write(back_efd_.get(), &one, sizeof(one));
      } else if (served == Served::kStream) {
        std::lock_guard lock(stream_mu_);
        new_streams_.push_back(Stream{std::move(c->fd), Clock::now(), 0, {}});
      }
      c.reset();
      {
        std::lock_guard lock(mu_);
        --in_use_;
        inflight_.store(in_use_);
      }
      free_cv_.notify_one();
    }
  }

  // One connection's requests while it holds the slot: the first, and any
  // that were pipelined behind it.
  Served serve(Conn& c, std::mt19937_64& rng) {
    while (true) {
      Request req;
      if (!read_request(c.fd.get(), c.buf, &req, Clock::now() + kReadTimeout, stop_)) {
        return Served::kClose;
      }
      if (is_stream_path(req.path)) {
        c.buf.clear();
        return write_all(c.fd.get(), kStreamHead, Clock::now() + kWriteTimeout, stop_)
                   ? Served::kStream
                   : Served::kClose;
      }
      bool keep_alive = req.keep_alive;
      c.buf.erase(0, req.length);
      double ms = draw_service_ms(o_.dist, o_.service_ms, rng);
      auto work = std::chrono::duration_cast<Clock::duration>(
          std::chrono::duration<double, std::milli>(ms));
      if (!stop_.sleep_until(Clock::now() + work)) return Served::kClose;
      const std::string& response = keep_alive ? kOkKeepAlive : kOkClose;
      if (!write_all(c.fd.get(), response, Clock::now() + kWriteTimeout, stop_)) {
        return Served::kClose;
      }
      auto done = Clock::now();
      duration_.observe(std::chrono::duration<double>(done - c.ready_at).count());
      requests_.fetch_add(1);
      // Connection: close. The server closes first, as HTTP has it, so the
      // TIME_WAIT is on this side and the client's ports are not used up.
      if (!keep_alive) return Served::kClose;
      if (parse_request(c.buf).state != Request::kComplete) return Served::kKeepAlive;
      c.ready_at = done;
    }
  }

  // Every 10 ms, one line "SEQ MS" (MS since the stream began) to each stream,
  // until the client goes away. A client that does not read is skipped, not
  // waited for.
  void stream_loop() {
    std::vector<Stream> streams;
    auto next = Clock::now();
    while (true) {
      next += kStreamTick;
      auto now = Clock::now();
      if (next < now) next = now;  // fell behind (a stall): no burst of catch-up lines
      if (!stop_.sleep_until(next)) return;
      {
        std::lock_guard lock(stream_mu_);
        for (Stream& s : new_streams_) streams.push_back(std::move(s));
        new_streams_.clear();
      }
      now = Clock::now();
      for (Stream& s : streams) {
        char sink[512];
        ssize_t got = recv(s.fd.get(), sink, sizeof(sink), MSG_DONTWAIT);
        if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) {
          s.fd.reset();
          continue;
        }
        if (s.pending.empty()) {
          char line[64];
          int len = std::snprintf(line, sizeof(line), "%lu %.3f\n", s.seq++,
                                  std::chrono::duration<double, std::milli>(now - s.start).count());
          s.pending.assign(line, static_cast<size_t>(len));
        }
        ssize_t sent =
            send(s.fd.get(), s.pending.data(), s.pending.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        if (sent > 0) {
          s.pending.erase(0, static_cast<size_t>(sent));
        } else if (sent < 0 && errno != EAGAIN && errno != EINTR) {
          s.fd.reset();
        }
      }
      std::erase_if(streams, [](const Stream& s) { return !s.fd; });
      streams_.store(static_cast<int64_t>(streams.size()));
    }
  }

  void metrics_loop() {
    while (wait_for(metrics_fd_.get(), POLLIN, Clock::time_point::max(), stop_)) {
      UniqueFd c(accept4(metrics_fd_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
      if (!c) continue;
      // A scrape is small and quick; a client that dawdles gets one second.
      auto deadline = Clock::now() + std::chrono::seconds(1);
      std::string buf;
      Request req;
      if (!read_request(c.get(), buf, &req, deadline, stop_)) continue;
      std::string body, status = "200 OK";
      if (req.path == "/metrics" || req.path.starts_with("/metrics?")) {
        body = render_metrics();
      } else {
        status = "404 Not Found";
        body = "try /metrics\n";
      }
      std::string response = "HTTP/1.1 " + status +
                             "\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: " +
                             std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
      write_all(c.get(), response, deadline, stop_);
    }
  }

  std::string render_metrics() const {
    std::string out;
    out += render_scalar("refserver_inflight", "gauge",
                         "Requests in service or handed to a worker and waiting for it.",
                         inflight_.load());
    out += render_scalar("refserver_workers", "gauge", "Worker slots: requests served at once.",
                         o_.workers);
    out += render_scalar("refserver_requests_total", "counter", "Responses written.",
                         static_cast<double>(requests_.load()));
    out += duration_.render("refserver_request_duration_seconds",
                            "Time in service: from accept (or, on a keep-alive connection, the "
                            "request's arrival) to the response written.");
    out += render_scalar("refserver_streams", "gauge", "Open /stream connections.",
                         static_cast<double>(streams_.load()));
    out +=
        "# HELP refserver_accept_queue Connections established and waiting in the kernel's "
        "accept queue.\n# TYPE refserver_accept_queue gauge\n";
    for (const Listener& l : listeners_) {
      out += "refserver_accept_queue{port=\"" + std::to_string(l.port) + "\"} " +
             std::to_string(accept_queue_length(l.fd.get())) + "\n";
    }
    return out;
  }

  struct Listener {
    // cppcheck-suppress unusedStructMember ; read in the metrics, through a range for
    uint16_t port;
    UniqueFd fd;
  };

  const Options& o_;
  Stop& stop_;
  std::vector<Listener> listeners_;
  UniqueFd metrics_fd_;
  std::vector<std::thread> threads_;

  // Slots: in_use_ counts connections handed to workers, queued or served.
  std::mutex mu_;
  std::condition_variable free_cv_, job_cv_;
  std::deque<std::unique_ptr<Conn>> jobs_;
  int in_use_ = 0;
  bool stopping_ = false;

  // Keep-alive connections going back from the workers to the dispatcher.
  std::mutex back_mu_;
  std::vector<std::unique_ptr<Conn>> back_;
  UniqueFd back_efd_;

  std::mutex stream_mu_;
  std::vector<Stream> new_streams_;

  std::atomic<int> inflight_{0};
  std::atomic<uint64_t> requests_{0};
  std::atomic<int64_t> streams_{0};
  Histogram duration_{duration_buckets()};
};

int run_main(int argc, char** argv) {
  CLI::App app{
      "refserver: a reference HTTP service that collapses under overload. --workers slots\n"
      "serve one request each for --service-ms; connections wait in the kernel's accept\n"
      "queue while every slot is busy. GET /stream holds no slot and writes a line every\n"
      "10 ms. Prometheus metrics on --metrics-port."};
  Options o;
  app.add_option("--port", o.ports, "Port to serve on [::] (IPv4 too); repeat for more")
      ->required()
      ->delimiter(',')
      ->check(CLI::Range(1, 65535));
  app.add_option("--workers", o.workers, "Requests served at once")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000));
  app.add_option("--service-ms", o.service_ms, "Mean service time of a request")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 600000.0));
  app.add_option("--service-dist", o.service_dist, "fixed, exp (exponential) or uniform (0..2x)")
      ->capture_default_str()
      ->check(CLI::IsMember({"fixed", "exp", "uniform"}));
  app.add_option("--metrics-port", o.metrics_port, "Port of /metrics; 0 for none")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  app.add_option("--backlog", o.backlog, "Listen backlog (capped by net.core.somaxconn)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--duration-s", o.duration_s, "Stop after this many seconds")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 86400.0));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;  // usage error
  }
  parse_service_dist(o.service_dist, &o.dist);

  // Signals are taken by sigtimedwait below; blocked before any thread starts
  // so that every thread inherits the mask and none is interrupted.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  (void)signal(SIGPIPE, SIG_IGN);
  // Keep-alive pools and streams hold a descriptor each, thousands in a lab run.
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    setrlimit(RLIMIT_NOFILE, &lim);
  }

  Stop stop;
  Server server(o, stop);
  std::string error;
  if (!server.listen_all(&error)) {
    std::fprintf(stderr, "refserver: %s\n", error.c_str());
    return 1;
  }
  server.start();
  std::string ports;
  for (uint16_t p : o.ports) ports += (ports.empty() ? "" : ",") + std::to_string(p);
  std::fprintf(stderr,
               "refserver: serving port %s, %d workers x %g ms (%s), backlog %d, metrics port %d, "
               "for %g s\n",
               ports.c_str(), o.workers, o.service_ms, o.service_dist.c_str(), o.backlog,
               o.metrics_port, o.duration_s);

  auto start = Clock::now();
  auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(o.duration_s));
  const char* why = "duration";
  while (true) {
    auto left = deadline - Clock::now();
    if (left <= Clock::duration::zero()) break;
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
    timespec ts{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
    int sig = sigtimedwait(&signals, nullptr, &ts);
    if (sig == SIGINT || sig == SIGTERM) {
      why = sig == SIGINT ? "SIGINT" : "SIGTERM";
      break;
    }
  }
  server.shutdown();
  std::fprintf(stderr, "refserver: stopped (%s) after %.1f s, %lu responses\n", why,
               std::chrono::duration<double>(Clock::now() - start).count(), server.requests());
  return 0;
}

}  // namespace
}  // namespace edgeshed::refserver

int main(int argc, char** argv) {
  return edgeshed::tools::guarded_main("refserver", edgeshed::refserver::run_main, argc, argv);
}
