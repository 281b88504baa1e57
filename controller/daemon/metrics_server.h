// HTTP listener of the daemon: GET /metrics (Prometheus text format),
// GET /level (the current pressure level, for the protected service) and
// GET /ready (daemon/readiness.h). Serves from the snapshot the tick thread
// last published.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "common/result.h"
#include "daemon/metrics.h"

namespace httplib {
class Server;
}

namespace edgeshed::daemon {

class MetricsServer {
 public:
  // Binds address:port now, so a port in use is an error at start-up.
  static Result<std::unique_ptr<MetricsServer>> start(const std::string& address, uint16_t port);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  void publish(std::shared_ptr<const MetricsSnapshot> snapshot);

 private:
  MetricsServer();
  std::shared_ptr<const MetricsSnapshot> snapshot() const;

  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  mutable std::mutex mu_;
  std::shared_ptr<const MetricsSnapshot> snapshot_;
};

}  // namespace edgeshed::daemon
