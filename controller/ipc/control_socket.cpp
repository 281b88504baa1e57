#include "ipc/control_socket.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <vector>

namespace edgeshed::ipc {
namespace {

constexpr size_t kMaxMessage = size_t{64} * 1024;
constexpr auto kServeTimeout = std::chrono::milliseconds(500);

Result<sockaddr_un> address_of(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) return make_error("socket path too long: " + path);
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return addr;
}

void set_timeout(int fd, std::chrono::milliseconds t) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(t.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((t.count() % 1000) * 1000);
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

Result<std::string> receive(int fd) {
  std::vector<char> buf(kMaxMessage);
  ssize_t n;
  do {
    n = recv(fd, buf.data(), buf.size(), 0);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return make_error(std::strerror(errno));
  return std::string(buf.data(), static_cast<size_t>(n));
}

Status send_all(int fd, const std::string& text) {
  if (text.size() > kMaxMessage) return make_error("message too large");
  ssize_t n;
  do {
    n = send(fd, text.data(), text.size(), MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return make_error(std::strerror(errno));
  return {};
}

}  // namespace

Result<ControlServer> ControlServer::listen(const std::string& path) {
  auto addr = address_of(path);
  if (!addr) return addr.error();
  Fd fd(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd.valid())
    return make_error("cannot create the control socket: " + std::string(std::strerror(errno)));
  unlink(path.c_str());
  // Root only from the first moment: no window in which others could connect.
  mode_t old = umask(0177);
  int rc = bind(fd.get(), reinterpret_cast<const sockaddr*>(&*addr), sizeof(*addr));
  umask(old);
  if (rc != 0) return make_error("cannot bind " + path + ": " + std::strerror(errno));
  if (::listen(fd.get(), 8) != 0)
    return make_error("cannot listen on " + path + ": " + std::strerror(errno));
  return ControlServer(std::move(fd), path);
}

ControlServer::~ControlServer() {
  if (fd_.valid()) unlink(path_.c_str());
}

namespace {

constexpr const char* kDeadlineKey = "deadline_monotonic_ms";

int64_t monotonic_ms() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

bool expired(const nlohmann::json& request) {
  const auto it = request.find(kDeadlineKey);
  return it != request.end() && it->is_number_integer() && monotonic_ms() > it->get<int64_t>();
}

}  // namespace

void ControlServer::serve_one(const Handler& handler) const {
  Fd conn(accept4(fd_.get(), nullptr, nullptr, SOCK_CLOEXEC));
  if (!conn.valid()) return;
  set_timeout(conn.get(), kServeTimeout);
  auto text = receive(conn.get());
  if (!text) return;
  nlohmann::json reply;
  auto request = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (request.is_discarded() || !request.is_object()) {
    reply = to_json(Reply::failure("malformed request: not a JSON object"));
  } else if (expired(request)) {
    // Its client gave up (the daemon was stopped or busy) and reported a
    // failure: applying it now would be a change nobody saw succeed.
    reply = to_json(Reply::failure("request expired before the daemon read it"));
  } else {
    request.erase(kDeadlineKey);
    reply = handler(request);
  }
  (void)send_all(conn.get(), reply.dump());
}

Result<nlohmann::json> control_request(const std::string& path, const nlohmann::json& request,
                                       std::chrono::milliseconds timeout) {
  auto addr = address_of(path);
  if (!addr) return addr.error();
  Fd fd(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return make_error(std::string("socket: ") + std::strerror(errno));
  set_timeout(fd.get(), timeout);
  if (connect(fd.get(), reinterpret_cast<const sockaddr*>(&*addr), sizeof(*addr)) != 0) {
    return make_error("cannot reach the daemon at " + path + ": " + std::strerror(errno));
  }
  nlohmann::json timed = request;
  timed[kDeadlineKey] = monotonic_ms() + timeout.count();
  if (auto s = send_all(fd.get(), timed.dump()); !s) {
    return make_error("cannot send to the daemon: " + s.error().message);
  }
  auto text = receive(fd.get());
  if (!text) return make_error("no reply from the daemon: " + text.error().message);
  auto reply = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (reply.is_discarded()) return make_error("malformed reply from the daemon");
  return reply;
}

Result<Reply> send_request(const std::string& path, const Request& request,
                           std::chrono::milliseconds timeout) {
  auto reply = control_request(path, to_json(request), timeout);
  if (!reply) return reply.error();
  return parse_reply(*reply);
}

}  // namespace edgeshed::ipc
