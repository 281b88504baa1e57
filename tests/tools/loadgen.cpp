// loadgen: the open-loop load generator of the edgeshed lab.
//
// Requests start when the schedule says, whatever happened to the earlier
// ones, so an overloaded server meets the full offered load (a closed-loop
// client would slow down with it and hide the overload). One thread runs an
// epoll loop over non-blocking sockets, which keeps thousands of concurrent
// connections cheap, and sleeps with nanosecond timeouts (epoll_pwait2) so
// that 1000+ arrivals per second are spaced as scheduled.
//
// Outcomes: ok (a complete 200 response), refused (ECONNREFUSED: a RST
// answered the SYN), reset (ECONNRESET or EPIPE after the connection was
// established), timeout (no answer within --timeout-ms), error (anything
// else, with its reason in the JSON).
#include "common/fd.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <deque>
#include <exception>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "loadgen_http.h"
#include "loadgen_options.h"
#include "loadgen_plan.h"
#include "loadgen_stats.h"
#include "printf_string.h"
#include "tool_main.h"

namespace edgeshed::loadgen {
namespace {

using Clock = std::chrono::steady_clock;

volatile std::sig_atomic_t g_interrupted = 0;

void on_signal(int /*signo*/) { g_interrupted = 1; }

// The project's owner of a file descriptor.
using UniqueFd = edgeshed::Fd;

double ms_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

std::string_view errno_name(int err) {
  const char* name = strerrorname_np(err);
  return name ? name : "EUNKNOWN";
}

struct Endpoint {
  sockaddr_storage addr{};
  socklen_t len = 0;
};

Endpoint make_endpoint(const std::string& address, uint16_t port, int family) {
  Endpoint e;
  if (family == AF_INET) {
    auto* a = reinterpret_cast<sockaddr_in*>(&e.addr);
    a->sin_family = AF_INET;
    a->sin_port = htons(port);
    inet_pton(AF_INET, address.c_str(), &a->sin_addr);
    e.len = sizeof(sockaddr_in);
  } else {
    auto* a = reinterpret_cast<sockaddr_in6*>(&e.addr);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(port);
    inet_pton(AF_INET6, address.c_str(), &a->sin6_addr);
    e.len = sizeof(sockaddr_in6);
  }
  return e;
}

enum class ConnState { kConnecting, kSending, kReading, kIdle, kDraining };

struct Conn {
  uint64_t id = 0;
  UniqueFd fd;
  uint16_t class_index = 0;
  ConnState state = ConnState::kConnecting;
  int64_t request = -1;  // the request it serves now, if any
  Clock::time_point connect_start;
  size_t sent = 0;
  std::string rx;
};

struct Deadline {
  Clock::time_point at;
  // cppcheck-suppress unusedStructMember ; read through timeouts_.front() and drains_.front()
  uint64_t id;  // a request for timeouts, a connection for drains
};

struct RunResult {
  std::vector<RequestRecord> records;
  double duration_s = 0;        // start to the last answer (or timeout)
  double arrival_window_s = 0;  // the time over which the schedule started requests
  double max_start_lag_ms = 0;  // worst lateness of a start behind its schedule
  Distribution start_lag_ms;
  bool interrupted = false;
};

class Runner {
 public:
  explicit Runner(const Options& o)
      : o_(o),
        timeout_(std::chrono::milliseconds(o.timeout_ms)),
        schedule_(o.burst ? ArrivalSchedule::burst(*o.burst)
                          : ArrivalSchedule(o.phases, o.poisson, o.seed)),
        picker_(shares(o)),
        idle_(o.classes.size()),
        waiting_(o.classes.size()) {
    for (const ClassSpec& c : o.classes) {
      ClassRuntime rt;
      rt.dst = make_endpoint(o.target, c.port, o.family);
      if (!c.source.empty()) rt.src = make_endpoint(c.source, 0, o.family);
      rt.request = make_request(o.path, o.target, o.keep_alive);
      classes_.push_back(std::move(rt));
    }
    for (const std::string& s : o.sources) sources_.push_back(make_endpoint(s, 0, o.family));
  }

  bool init(std::string* error) {
    epoll_ = UniqueFd(epoll_create1(EPOLL_CLOEXEC));
    if (!epoll_) {
      *error = std::string("epoll_create1: ") + std::strerror(errno);
      return false;
    }
    return true;
  }

  RunResult run() {
    // Growing these mid-run would copy them between two arrivals.
    double expected = 0;
    for (const Phase& p : o_.phases) expected += p.rate * p.duration_s;
    if (o_.burst) expected = static_cast<double>(*o_.burst);
    auto reserve = static_cast<size_t>(std::min(expected * 1.1 + 64, 5e7));
    if (o_.count) reserve = std::min<size_t>(reserve, *o_.count);
    records_.reserve(reserve);
    request_start_.reserve(reserve);
    request_conn_.reserve(reserve);
    lags_.reserve(reserve);
    conns_.reserve(4096);
    start_ = Clock::now();
    last_finish_ = start_;
    std::optional<Arrival> next = schedule_.next();
    const auto hard_stop = start_ + to_duration(o_.window_s) + timeout_ + std::chrono::seconds(1);
    bool arrivals_done = false;
    std::vector<epoll_event> events(512);
    RunResult result;

    while (true) {
      auto now = Clock::now();
      while (!arrivals_done) {
        if (!next || (o_.count && started_ >= *o_.count) || g_interrupted) {
          arrivals_done = true;
          result.arrival_window_s = next ? next->t_s : schedule_.end_s();
          break;
        }
        auto due = start_ + to_duration(next->t_s);
        if (due > now) break;
        lags_.push_back(ms_between(due, now));
        start_request(*next, now);
        next = schedule_.next();
        now = Clock::now();
      }
      expire(now);
      if (arrivals_done && outstanding_ == 0 && draining_ == 0) break;
      if (g_interrupted || now >= hard_stop) {
        result.interrupted = g_interrupted != 0;
        break;
      }

      Clock::time_point wake = hard_stop;
      if (!arrivals_done) wake = std::min(wake, start_ + to_duration(next->t_s));
      if (!timeouts_.empty()) wake = std::min(wake, timeouts_.front().at);
      if (!drains_.empty()) wake = std::min(wake, drains_.front().at);
      auto wait_ns = std::max<int64_t>(
          0, std::chrono::duration_cast<std::chrono::nanoseconds>(wake - now).count());
      timespec ts{static_cast<time_t>(wait_ns / 1000000000),
                  static_cast<long>(wait_ns % 1000000000)};
      int n =
          epoll_pwait2(epoll_.get(), events.data(), static_cast<int>(events.size()), &ts, nullptr);
      if (n < 0) {
        if (errno == EINTR) continue;
        std::fprintf(stderr, "loadgen: epoll_pwait2: %s\n", std::strerror(errno));
        break;
      }
      now = Clock::now();
      for (int i = 0; i < n; ++i) {
        auto it = conns_.find(events[i].data.u64);
        if (it != conns_.end()) on_event(*it->second, events[i].events, now);
      }
    }

    // Cut short (signal or the hard stop): whatever is unanswered timed out.
    auto end = Clock::now();
    for (size_t rid = 0; rid < records_.size(); ++rid) {
      if (records_[rid].outcome == Outcome::kPending) finish(rid, Outcome::kTimeout, {}, end);
    }
    conns_.clear();
    result.start_lag_ms = describe(lags_);
    result.max_start_lag_ms = result.start_lag_ms.max.value_or(0);
    result.records = std::move(records_);
    result.duration_s = std::chrono::duration<double>(last_finish_ - start_).count();
    return result;
  }

 private:
  struct ClassRuntime {
    Endpoint dst;
    std::optional<Endpoint> src;
    std::string request;
  };

  static std::vector<double> shares(const Options& o) {
    std::vector<double> s;
    for (const ClassSpec& c : o.classes) s.push_back(c.share);
    return s;
  }

  static Clock::duration to_duration(double seconds) {
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  }

  void start_request(const Arrival& arrival, Clock::time_point now) {
    auto cls = static_cast<uint16_t>(picker_.next());
    uint64_t rid = records_.size();
    RequestRecord rec;
    rec.start_ms = ms_between(start_, now);
    rec.class_index = cls;
    rec.phase = arrival.phase;
    records_.push_back(rec);
    request_start_.push_back(now);
    request_conn_.push_back(0);
    ++started_;
    ++outstanding_;
    timeouts_.push_back({now + timeout_, rid});
    if (o_.keep_alive) {
      assign(rid);
    } else {
      open_conn(cls, rid, now);
    }
  }

  // Keep-alive: an idle connection of the class, else a new one, else wait.
  void assign(uint64_t rid) {
    uint16_t cls = records_[rid].class_index;
    auto& idle = idle_[cls];
    while (!idle.empty()) {
      auto it = conns_.find(idle.back());
      idle.pop_back();
      if (it != conns_.end() && it->second->state == ConnState::kIdle) {
        Conn& c = *it->second;
        c.request = static_cast<int64_t>(rid);
        request_conn_[rid] = c.id;
        c.state = ConnState::kSending;
        c.sent = 0;
        send_request(c, Clock::now());
        return;
      }
    }
    if (conns_.size() < o_.max_connections) {
      open_conn(cls, rid, Clock::now());
    } else {
      waiting_[cls].push_back(rid);
    }
  }

  void open_conn(uint16_t cls, uint64_t rid, Clock::time_point now) {
    const ClassRuntime& rt = classes_[cls];
    UniqueFd fd(socket(o_.family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd) {
      finish(rid, Outcome::kError, errno_name(errno), now);
      return;
    }
    const Endpoint* src = rt.src ? &*rt.src : nullptr;
    if (!src && !sources_.empty()) src = &sources_[next_source_++ % sources_.size()];
    if (src) {
      // Without this, bind() picks the port alone and needs one no other
      // connection uses; deferring it to connect() lets ports be shared across
      // destinations, so source binding does not exhaust them sooner.
      int on = 1;
      setsockopt(fd.get(), IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &on, sizeof(on));
      if (bind(fd.get(), reinterpret_cast<const sockaddr*>(&src->addr), src->len) != 0) {
        finish(rid, Outcome::kError, errno_name(errno), now);
        return;
      }
    }
    auto conn = std::make_unique<Conn>();
    conn->id = next_conn_id_++;
    conn->class_index = cls;
    conn->request = static_cast<int64_t>(rid);
    conn->connect_start = Clock::now();
    int rc = connect(fd.get(), reinterpret_cast<const sockaddr*>(&rt.dst.addr), rt.dst.len);
    if (rc != 0 && errno != EINPROGRESS) {
      fail(rid, errno, Clock::now());
      return;
    }
    epoll_event ev{};
    ev.events = EPOLLOUT;
    ev.data.u64 = conn->id;
    if (epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd.get(), &ev) != 0) {
      finish(rid, Outcome::kError, errno_name(errno), now);
      return;
    }
    conn->fd = std::move(fd);
    request_conn_[rid] = conn->id;
    Conn& c = *conn;
    conns_.emplace(c.id, std::move(conn));
    if (rc == 0) on_connected(c, Clock::now());
  }

  void watch(Conn& c, uint32_t events) {
    epoll_event ev{};
    ev.events = events;
    ev.data.u64 = c.id;
    epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, c.fd.get(), &ev);
  }

  void on_event(Conn& c, uint32_t events, Clock::time_point now) {
    switch (c.state) {
      case ConnState::kConnecting: {
        int err = 0;
        socklen_t len = sizeof(err);
        getsockopt(c.fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
        if (err == 0 && (events & EPOLLOUT)) {
          on_connected(c, now);
        } else {
          fail_conn(c, err ? err : ECONNRESET, now);
        }
        return;
      }
      case ConnState::kSending:
        send_request(c, now);
        return;
      case ConnState::kReading:
        read_response(c, now);
        return;
      case ConnState::kIdle:
      case ConnState::kDraining:
        drain(c);
        return;
    }
  }

  void on_connected(Conn& c, Clock::time_point now) {
    if (c.request >= 0) records_[c.request].connect_ms = ms_between(c.connect_start, now);
    c.state = ConnState::kSending;
    c.sent = 0;
    send_request(c, now);
  }

  void send_request(Conn& c, Clock::time_point now) {
    const std::string& req = classes_[c.class_index].request;
    while (c.sent < req.size()) {
      ssize_t n = send(c.fd.get(), req.data() + c.sent, req.size() - c.sent, MSG_NOSIGNAL);
      if (n > 0) {
        c.sent += static_cast<size_t>(n);
      } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
        if (errno == EAGAIN) {
          watch(c, EPOLLOUT);
          return;
        }
      } else {
        fail_conn(c, n < 0 ? errno : EPIPE, now);
        return;
      }
    }
    c.state = ConnState::kReading;
    c.rx.clear();
    watch(c, EPOLLIN | EPOLLRDHUP);
  }

  // Reads what is there. Returns false if the connection failed (and is gone).
  bool read_available(Conn& c, bool* eof, Clock::time_point now) {
    char buf[16384];
    while (true) {
      ssize_t n = recv(c.fd.get(), buf, sizeof(buf), 0);
      if (n > 0) {
        c.rx.append(buf, static_cast<size_t>(n));
        if (static_cast<size_t>(n) < sizeof(buf)) return true;
      } else if (n == 0) {
        *eof = true;
        return true;
      } else if (errno == EINTR) {
        continue;
      } else if (errno == EAGAIN) {
        return true;
      } else {
        fail_conn(c, errno, now);
        return false;
      }
    }
  }

  void read_response(Conn& c, Clock::time_point now) {
    bool eof = false;
    if (!read_available(c, &eof, now)) return;
    ResponseProgress p = parse_response(c.rx, eof);
    if (p.state == ResponseProgress::kIncomplete) return;
    auto rid = static_cast<uint64_t>(c.request);
    if (p.state == ResponseProgress::kMalformed) {
      finish(rid, Outcome::kError, c.rx.empty() ? "closed_before_response" : "malformed_response",
             now);
      close_conn(c);
      return;
    }
    finish(rid, p.status == 200 ? Outcome::kOk : Outcome::kError,
           p.status == 200 ? std::string_view() : status_reason(p.status), now);
    c.request = -1;
    c.rx.erase(0, p.length);
    if (eof) {
      close_conn(c);
    } else if (!o_.keep_alive || p.server_closes || !c.rx.empty()) {
      // Wait for the server's FIN rather than close first: the side that
      // closes first keeps TIME_WAIT, and here that would be the client's
      // ephemeral ports, which a long run at 1000+/s would exhaust.
      c.state = ConnState::kDraining;
      ++draining_;
      drains_.push_back({now + std::chrono::milliseconds(500), c.id});
      watch(c, EPOLLIN | EPOLLRDHUP);
    } else {
      c.state = ConnState::kIdle;
      uint16_t cls = c.class_index;
      while (!waiting_[cls].empty()) {
        uint64_t next = waiting_[cls].front();
        waiting_[cls].pop_front();
        if (records_[next].outcome != Outcome::kPending) continue;
        c.request = static_cast<int64_t>(next);
        request_conn_[next] = c.id;
        c.state = ConnState::kSending;
        c.sent = 0;
        send_request(c, now);
        return;
      }
      idle_[cls].push_back(c.id);
    }
  }

  static std::string_view status_reason(int status) {
    static const char* const kNames[] = {"http_1xx", "http_2xx", "http_3xx", "http_4xx",
                                         "http_5xx"};
    int i = status / 100 - 1;
    return i >= 0 && i < 5 ? kNames[i] : "http_other";
  }

  // An idle or draining connection has nothing to say: data or EOF ends it.
  void drain(Conn& c) {
    char buf[4096];
    while (true) {
      ssize_t n = recv(c.fd.get(), buf, sizeof(buf), 0);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) return;
      close_conn(c);
      return;
    }
  }

  void fail_conn(Conn& c, int err, Clock::time_point now) {
    if (c.request >= 0) fail(static_cast<uint64_t>(c.request), err, now);
    close_conn(c);
  }

  void fail(uint64_t rid, int err, Clock::time_point now) {
    switch (err) {
      case ECONNREFUSED:
        finish(rid, Outcome::kRefused, {}, now);
        break;
      case ECONNRESET:
      case EPIPE:
        finish(rid, Outcome::kReset, {}, now);
        break;
      case ETIMEDOUT:
        finish(rid, Outcome::kTimeout, {}, now);
        break;
      default:
        finish(rid, Outcome::kError, errno_name(err), now);
    }
  }

  void finish(uint64_t rid, Outcome outcome, std::string_view reason, Clock::time_point now) {
    RequestRecord& rec = records_[rid];
    if (rec.outcome != Outcome::kPending) return;
    rec.outcome = outcome;
    rec.latency_ms = ms_between(request_start_[rid], now);
    rec.error = reason;
    --outstanding_;
    last_finish_ = std::max(last_finish_, now);
  }

  void close_conn(Conn& c) {
    if (c.state == ConnState::kDraining) --draining_;
    conns_.erase(c.id);  // closes the socket, which also leaves the epoll set
    if (!o_.keep_alive) return;
    // A place in the pool is free: a waiting request may open a connection.
    for (size_t cls = 0; cls < waiting_.size(); ++cls) {
      while (!waiting_[cls].empty() && conns_.size() < o_.max_connections) {
        uint64_t rid = waiting_[cls].front();
        waiting_[cls].pop_front();
        if (records_[rid].outcome == Outcome::kPending) {
          open_conn(static_cast<uint16_t>(cls), rid, Clock::now());
        }
      }
    }
  }

  void expire(Clock::time_point now) {
    while (!timeouts_.empty() && timeouts_.front().at <= now) {
      uint64_t rid = timeouts_.front().id;
      timeouts_.pop_front();
      if (records_[rid].outcome != Outcome::kPending) continue;
      finish(rid, Outcome::kTimeout, {}, now);
      auto it = conns_.find(request_conn_[rid]);
      if (it != conns_.end() && it->second->request == static_cast<int64_t>(rid)) {
        close_conn(*it->second);
      }
    }
    while (!drains_.empty() && drains_.front().at <= now) {
      auto it = conns_.find(drains_.front().id);
      drains_.pop_front();
      if (it != conns_.end() && it->second->state == ConnState::kDraining) close_conn(*it->second);
    }
  }

  const Options& o_;
  const Clock::duration timeout_;
  ArrivalSchedule schedule_;
  ClassPicker picker_;
  std::vector<ClassRuntime> classes_;
  std::vector<Endpoint> sources_;
  size_t next_source_ = 0;
  UniqueFd epoll_;
  Clock::time_point start_, last_finish_;

  std::vector<RequestRecord> records_;
  std::vector<Clock::time_point> request_start_;
  std::vector<uint64_t> request_conn_;  // 0: none (connection ids start at 1)
  std::vector<double> lags_;
  uint64_t started_ = 0;
  uint64_t outstanding_ = 0;

  std::unordered_map<uint64_t, std::unique_ptr<Conn>> conns_;
  uint64_t next_conn_id_ = 1;
  size_t draining_ = 0;
  std::deque<Deadline> timeouts_;  // in start order, hence in deadline order
  std::deque<Deadline> drains_;
  std::vector<std::vector<uint64_t>> idle_;    // per class, keep-alive only
  std::vector<std::deque<uint64_t>> waiting_;  // per class, keep-alive only
};

void raise_fd_limit() {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    setrlimit(RLIMIT_NOFILE, &lim);
  }
}

std::string fmt_ms(std::optional<double> v) { return v ? tools::printf_string("%.1f", *v) : "-"; }

std::string fmt_ms2(std::optional<double> v) { return v ? tools::printf_string("%.2f", *v) : "-"; }

void print_header() {
  std::printf("%-12s %8s %8s %8s %7s %8s %6s %9s %8s %8s %8s %8s %8s %8s\n", "class", "offered",
              "ok", "refused", "reset", "timeout", "error", "ok/s", "p50_ms", "p90_ms", "p99_ms",
              "max_ms", "ref_p50", "ref_p99");
}

void print_row(const std::string& name, const GroupSummary& g) {
  std::printf("%-12s %8lu %8lu %8lu %7lu %8lu %6lu %9.1f %8s %8s %8s %8s %8s %8s\n", name.c_str(),
              g.offered, g.ok, g.refused, g.reset, g.timeout, g.error, g.completed_per_sec,
              fmt_ms(g.ok_latency_ms.p50).c_str(), fmt_ms(g.ok_latency_ms.p90).c_str(),
              fmt_ms(g.ok_latency_ms.p99).c_str(), fmt_ms(g.ok_latency_ms.max).c_str(),
              fmt_ms(g.refused_ms.p50).c_str(), fmt_ms(g.refused_ms.p99).c_str());
}

bool write_csv(const std::string& path, const Options& o, const RunResult& r) {
  std::ofstream out(path);
  if (!out) return false;
  out << "start_ms,class,outcome,latency_ms,connect_ms,phase,error\n";
  for (const RequestRecord& rec : r.records) {
    const std::string connect =
        rec.connect_ms >= 0 ? tools::printf_string("%.3f", rec.connect_ms) : "";
    out << tools::printf_string("%.3f,%s,%s,%.3f,%s,%u,%.*s\n", rec.start_ms,
                                o.classes[rec.class_index].name.c_str(),
                                outcome_name(rec.outcome).data(), rec.latency_ms, connect.c_str(),
                                rec.phase, static_cast<int>(rec.error.size()), rec.error.data());
  }
  return static_cast<bool>(out.flush());
}

// Rounds to `decimals` places; dividing by a power of ten, not multiplying by
// its inverse, gives the double nearest the decimal (0.5104, not 0.5104000000000001).
double round_to(double v, int decimals) {
  double scale = std::pow(10.0, decimals);
  return std::round(v * scale) / scale;
}

int run_main(int argc, char** argv) {
  ParseOutcome parsed = parse_args(argc, argv);
  if (!parsed.options) {
    std::fputs(parsed.message.c_str(), parsed.exit_code == 0 ? stdout : stderr);
    return parsed.exit_code;
  }
  const Options& o = *parsed.options;
  for (const std::string& w : o.warnings) std::fprintf(stderr, "loadgen: warning: %s\n", w.c_str());

  raise_fd_limit();
  prctl(PR_SET_TIMERSLACK, 1UL);  // the default 50 us slack would blur 1 ms gaps
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  (void)std::signal(SIGPIPE, SIG_IGN);

  Runner runner(o);
  std::string error;
  if (!runner.init(&error)) {
    std::fprintf(stderr, "loadgen: %s\n", error.c_str());
    return 1;
  }
  RunResult r = runner.run();

  std::span<const RequestRecord> records(r.records);
  GroupSummary total = summarize(records, r.duration_s, [](const RequestRecord&) { return true; });
  std::vector<GroupSummary> per_class;
  for (size_t i = 0; i < o.classes.size(); ++i) {
    per_class.push_back(summarize(records, r.duration_s,
                                  [i](const RequestRecord& rec) { return rec.class_index == i; }));
  }
  // A phase cut short by --count or a signal lasted only until the arrivals
  // stopped; its rates are per second of that.
  std::vector<double> phase_start, phase_len;
  std::vector<GroupSummary> per_phase;
  double at = 0;
  for (size_t i = 0; i < o.phases.size(); ++i) {
    phase_start.push_back(at);
    phase_len.push_back(std::clamp(r.arrival_window_s - at, 0.0, o.phases[i].duration_s));
    at += o.phases[i].duration_s;
    per_phase.push_back(
        summarize(records, phase_len[i], [i](const RequestRecord& rec) { return rec.phase == i; }));
  }
  std::optional<double> offered_per_sec;
  if (r.arrival_window_s > 0) {
    offered_per_sec = static_cast<double>(total.offered) / r.arrival_window_s;
  }

  if (!o.quiet) {
    std::printf("loadgen: %s port %u, %s%s, %lu requests over %.2f s", o.target.c_str(), o.port,
                o.schedule.c_str(), o.keep_alive ? " keep-alive" : "", total.offered,
                r.arrival_window_s);
    if (offered_per_sec) std::printf(" (%.1f/s offered)", *offered_per_sec);
    std::printf(", run %.2f s, start lag p99 %s ms max %s ms%s\n", r.duration_s,
                fmt_ms2(r.start_lag_ms.p99).c_str(), fmt_ms2(r.start_lag_ms.max).c_str(),
                r.interrupted ? ", INTERRUPTED" : "");
    print_header();
    for (size_t i = 0; i < o.classes.size(); ++i) print_row(o.classes[i].name, per_class[i]);
    print_row("total", total);
    if (o.schedule == "ramp") {
      std::printf("\n%-5s %-8s %9s %8s %8s %8s %8s %8s %8s\n", "phase", "rate", "req/s", "seconds",
                  "offered", "ok", "refused", "timeout", "p99_ms");
      for (size_t i = 0; i < o.phases.size(); ++i) {
        const GroupSummary& g = per_phase[i];
        std::printf("%-5zu %-8s %9.1f %8.1f %8lu %8lu %8lu %8lu %8s\n", i,
                    o.phases[i].label.c_str(), o.phases[i].rate, phase_len[i], g.offered, g.ok,
                    g.refused, g.timeout, fmt_ms(g.ok_latency_ms.p99).c_str());
      }
    }
    for (const auto& [reason, n] : total.error_reasons) {
      std::printf("error %s: %lu\n", reason.c_str(), n);
    }
    std::fflush(stdout);
  }

  int rc = 0;
  if (!o.csv_path.empty() && !write_csv(o.csv_path, o, r)) {
    std::fprintf(stderr, "loadgen: cannot write %s\n", o.csv_path.c_str());
    rc = 1;
  }
  if (!o.json_path.empty()) {
    nlohmann::ordered_json j;
    j["target"] = o.target;
    j["port"] = o.port;
    j["schedule"] = o.schedule;
    j["keep_alive"] = o.keep_alive;
    j["timeout_ms"] = o.timeout_ms;
    j["count"] = o.count ? nlohmann::ordered_json(*o.count) : nlohmann::ordered_json(nullptr);
    j["duration_s"] = round_to(r.duration_s, 4);
    j["arrival_window_s"] = round_to(r.arrival_window_s, 4);
    j["offered_per_sec"] = offered_per_sec ? nlohmann::ordered_json(round_to(*offered_per_sec, 2))
                                           : nlohmann::ordered_json();
    j["max_start_lag_ms"] = round_to(r.max_start_lag_ms, 3);
    j["start_lag_ms"] = to_json(r.start_lag_ms);
    j["interrupted"] = r.interrupted;
    j["classes"] = nlohmann::ordered_json::object();
    for (size_t i = 0; i < o.classes.size(); ++i) {
      nlohmann::ordered_json c = to_json(per_class[i]);
      c["port"] = o.classes[i].port;
      c["source"] = o.classes[i].source.empty() ? nlohmann::ordered_json()
                                                : nlohmann::ordered_json(o.classes[i].source);
      c["share"] = round_to(o.classes[i].share, 6);
      j["classes"][o.classes[i].name] = c;
    }
    j["total"] = to_json(total);
    j["phases"] = nlohmann::ordered_json::array();
    for (size_t i = 0; i < o.phases.size(); ++i) {
      nlohmann::ordered_json p = to_json(per_phase[i]);
      p["index"] = i;
      p["label"] = o.phases[i].label;
      p["rate"] = o.phases[i].rate;
      p["start_s"] = round_to(phase_start[i], 4);
      p["duration_s"] = round_to(phase_len[i], 4);
      j["phases"].push_back(p);
    }
    std::ofstream out(o.json_path);
    out << j.dump(2) << "\n";
    if (!out.flush()) {
      std::fprintf(stderr, "loadgen: cannot write %s\n", o.json_path.c_str());
      rc = 1;
    }
  }
  return rc;
}

}  // namespace
}  // namespace edgeshed::loadgen

int main(int argc, char** argv) {
  return edgeshed::tools::guarded_main("loadgen", edgeshed::loadgen::run_main, argc, argv);
}
