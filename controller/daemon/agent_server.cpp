#include "daemon/agent_server.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>

#include "daemon/agent_reply.h"
#include "daemon/log_limiter.h"
#include "daemon/steady_clock.h"
#include "dataplane/errno_message.h"

namespace edgeshed::daemon {
namespace {

// HAProxy's own agent timeout is its `timeout check` (or agent-inter); the
// line is one write, and a well-behaved peer closes at once.
constexpr auto kConnectionTimeout = std::chrono::milliseconds(500);
// What a peer may send (HAProxy's agent-send) before it is cut off.
constexpr std::size_t kMaxDrainBytes = 4096;
constexpr int kBacklog = 64;
// After a poll or an accept that failed for want of fds or memory.
constexpr int kRetryMs = 100;
// A failure that repeats (fds exhausted, peers that stall) is logged once
// per interval.
constexpr auto kLogInterval = std::chrono::seconds(10);

void log_error(LogLimiter& errors, const char* key, const std::string& message) {
  errors.error(key, "HAProxy agent: " + message, SteadyClock().now());
}

}  // namespace

Result<std::unique_ptr<AgentServer>> AgentServer::start(const std::string& address, uint16_t port) {
  auto where = signals::parse_ip_address(address, port);
  if (!where) return make_error("[agent] listen: " + where.error().message);
  const std::string advice = " (port in use? set [agent] listen, or \"off\")";
  Fd fd(::socket(where->family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return make_error("HAProxy agent listener: socket: " + errno_text(errno));
  // Each answer ends with our FIN, so the port collects TIME_WAIT sockets
  // that would refuse a restarted daemon's bind.
  int one = 1;
  if (::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
      ::bind(fd.get(), where->get(), where->length) != 0 || ::listen(fd.get(), kBacklog) != 0) {
    return make_error("cannot listen for the HAProxy agent on " + where->to_string() + ": " +
                      errno_text(errno) + advice);
  }
  signals::SocketAddress bound;
  bound.length = sizeof(bound.storage);
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&bound.storage), &bound.length) != 0) {
    return make_error("HAProxy agent listener: getsockname: " + errno_text(errno));
  }
  auto server = std::make_unique<AgentServer>(Key{}, std::move(fd), bound.port());
  if (server->stop_.fd() < 0) {
    return make_error("HAProxy agent listener: eventfd: " + errno_text(errno));
  }
  AgentServer* self = server.get();
  server->thread_ = std::thread([self] { self->serve(); });
  return server;
}

AgentServer::AgentServer(Key /*key*/, Fd listener, uint16_t port)
    : listener_(std::move(listener)), port_(port) {}

AgentServer::~AgentServer() {
  stop_.cancel();
  if (thread_.joinable()) thread_.join();
}

void AgentServer::publish(std::shared_ptr<const MetricsSnapshot> snapshot) {
  std::lock_guard lock(mu_);
  snapshot_ = std::move(snapshot);
}

std::optional<std::string> AgentServer::reply() const {
  std::lock_guard lock(mu_);
  if (!snapshot_) return std::nullopt;
  return agent_reply(*snapshot_, snapshot_->agent_reply);
}

bool AgentServer::pause() const {
  pollfd stop = {stop_.fd(), POLLIN, 0};
  return ::poll(&stop, 1, kRetryMs) <= 0;
}

bool AgentServer::stopping() const {
  pollfd stop = {stop_.fd(), POLLIN, 0};
  return ::poll(&stop, 1, 0) > 0;
}

void AgentServer::serve() {
  // This thread's own: a LogLimiter is not thread-safe.
  LogLimiter errors(kLogInterval);
  for (;;) {
    pollfd fds[2] = {{listener_.get(), POLLIN, 0}, {stop_.fd(), POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      const int err = errno;
      if (err == EINTR) continue;
      log_error(errors, "poll", "poll: " + errno_text(err));
      if (!pause()) return;
      continue;
    }
    if (fds[1].revents != 0) return;
    if ((fds[0].revents & POLLIN) == 0) {
      log_error(errors, "poll",
                "poll: an error on the listener (revents " + std::to_string(fds[0].revents) + ")");
      if (!pause()) return;  // an error on the listener: never seen, but no spinning on it
      continue;
    }
    Fd conn(::accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    const int err = errno;
    if (conn.valid()) {
      answer(conn.get(), errors);
    } else if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
      log_error(errors, "accept", "accept: " + errno_text(err) + " (connections wait)");
      // The connection stays queued: wait rather than spin on it.
      if (!pause()) return;
    }  // else the peer gave up already (ECONNABORTED): the next one
  }
}

void AgentServer::answer(int fd, LogLimiter& errors) const {
  const auto limits = signals::IoLimits::from_now(kConnectionTimeout, stop_.fd());
  if (auto line = reply()) {
    if (auto s = signals::send_all(fd, *line, limits, "the agent-check peer"); !s) {
      // A stop cancels the send: no failure of the peer's.
      if (!stopping()) log_error(errors, "send", s.error().message);
      return;
    }
  }
  // Our FIN, then the peer's: closing with unread bytes (an agent-send
  // string) would reset the connection, and the reset can overtake the line.
  ::shutdown(fd, SHUT_WR);
  char sink[512];
  for (std::size_t drained = 0; drained < kMaxDrainBytes;) {
    auto n = signals::receive_some(fd, sink, sizeof(sink), limits, "draining the agent peer");
    if (!n || *n == 0) return;
    drained += *n;
  }
}

}  // namespace edgeshed::daemon
