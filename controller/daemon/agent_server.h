// The HAProxy agent-check responder ([agent] listen): to each connection,
// one line (daemon/agent_reply.h) from the snapshot the tick thread last
// published, then it closes; nothing before the first tick. One thread
// serves the connections in turn, each bounded by a short deadline, so a
// peer that stalls delays the next one by that much at most.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "common/fd.h"
#include "common/result.h"
#include "daemon/metrics.h"
#include "signals/net_io.h"

namespace edgeshed::daemon {

class LogLimiter;

class AgentServer {
  // Only start() makes one: the serving thread holds `this`.
  struct Key {
    explicit Key() = default;
  };

 public:
  // Binds address:port now (port 0: any, for tests), so that a port in use
  // is an error at start-up.
  static Result<std::unique_ptr<AgentServer>> start(const std::string& address, uint16_t port);

  AgentServer(Key key, Fd listener, uint16_t port);
  ~AgentServer();
  AgentServer(const AgentServer&) = delete;
  AgentServer& operator=(const AgentServer&) = delete;

  uint16_t port() const { return port_; }
  void publish(std::shared_ptr<const MetricsSnapshot> snapshot);

 private:
  void serve();
  // Waits a little; false when stopped meanwhile.
  bool pause() const;
  bool stopping() const;
  // Failures go to `errors`, the serving thread's.
  void answer(int fd, LogLimiter& errors) const;
  // None before the first tick.
  std::optional<std::string> reply() const;

  Fd listener_;
  uint16_t port_;
  signals::Canceller stop_;
  mutable std::mutex mu_;
  std::shared_ptr<const MetricsSnapshot> snapshot_;
  std::thread thread_;
};

}  // namespace edgeshed::daemon
