// The daemon's control socket: the CLI sends one JSON request per
// connection and reads one JSON reply. A Unix seqpacket socket, so a
// message arrives whole or not at all; only the daemon's user and root
// (0600 in the run dir).
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "common/fd.h"
#include "common/result.h"
#include "ipc/requests.h"

namespace edgeshed::ipc {

class ControlServer {
 public:
  using Handler = std::function<nlohmann::json(const nlohmann::json& request)>;

  // Binds path (replacing a stale socket file: the caller holds the run
  // directory's lock, so no live daemon owns it).
  static Result<ControlServer> listen(const std::string& path);
  ControlServer(ControlServer&&) = default;
  ControlServer& operator=(ControlServer&&) = default;
  ~ControlServer();

  int fd() const { return fd_.get(); }
  // Serves one pending connection; a misbehaving client costs at most the
  // socket timeout and never stops the daemon.
  void serve_one(const Handler& handler) const;

 private:
  ControlServer(Fd fd, std::string path) : fd_(std::move(fd)), path_(std::move(path)) {}
  Fd fd_;
  std::string path_;
};

// Sends a request to the daemon listening on path and returns its reply.
Result<nlohmann::json> control_request(const std::string& path, const nlohmann::json& request,
                                       std::chrono::milliseconds timeout = std::chrono::seconds(5));
// The same, typed: a reply that is not one of the protocol's is an error.
Result<Reply> send_request(const std::string& path, const Request& request,
                           std::chrono::milliseconds timeout = std::chrono::seconds(5));

}  // namespace edgeshed::ipc
