#include "daemon/metrics_server.h"

#include <httplib.h>

#include <chrono>
#include <thread>

#include "daemon/readiness.h"

namespace edgeshed::daemon {
namespace {

constexpr const char* kPrometheusType = "text/plain; version=0.0.4; charset=utf-8";
constexpr auto kIoTimeoutSeconds = 2;
constexpr size_t kWorkers = 2;
constexpr int kStartWaitSteps = 5000;  // 1 ms each

}  // namespace

MetricsServer::MetricsServer() : server_(std::make_unique<httplib::Server>()) {}

MetricsServer::~MetricsServer() {
  server_->stop();
  if (thread_.joinable()) thread_.join();
}

Result<std::unique_ptr<MetricsServer>> MetricsServer::start(const std::string& address,
                                                            uint16_t port) {
  std::unique_ptr<MetricsServer> m(new MetricsServer());  // private ctor
  auto& srv = *m->server_;
  srv.set_read_timeout(kIoTimeoutSeconds, 0);
  srv.set_write_timeout(kIoTimeoutSeconds, 0);
  srv.set_keep_alive_max_count(4);
  // A scrape every few seconds needs no pool of workers. httplib takes
  // ownership of the queue it is given, hence the bare new.
  srv.new_task_queue = [] { return new httplib::ThreadPool(kWorkers); };
  MetricsServer* self = m.get();
  srv.Get("/metrics", [self](const httplib::Request&, httplib::Response& res) {
    auto snap = self->snapshot();
    if (!snap) {
      res.status = 503;
      res.set_content("no tick yet\n", "text/plain");
      return;
    }
    res.set_content(render_metrics(*snap), kPrometheusType);
  });
  srv.Get("/level", [self](const httplib::Request&, httplib::Response& res) {
    auto snap = self->snapshot();
    if (!snap) {
      res.status = 503;
      res.set_content("no tick yet\n", "text/plain");
      return;
    }
    res.set_content(std::string(names::name_of(snap->level)) + "\n", "text/plain");
  });
  srv.Get("/ready", [self](const httplib::Request&, httplib::Response& res) {
    auto snap = self->snapshot();
    // Before the first tick there is no threshold, and none is needed.
    ReadyAnswer answer =
        ready_answer(snap.get(), snap ? snap->not_ready_from : law::Level::kCritical);
    res.status = answer.status;
    res.set_content(answer.body, "text/plain");
  });
  if (!srv.bind_to_port(address, port)) {
    return make_error("cannot listen for metrics on " + address + ":" + std::to_string(port) +
                      " (port in use? set [metrics] listen, or \"off\")");
  }
  m->thread_ = std::thread([self] { self->server_->listen_after_bind(); });
  // stop() only reaches a server that is listening: wait for it, so that a
  // start-up that fails right after this (and destroys the server) cannot
  // leave the thread listening forever and the daemon hanging in join().
  for (int i = 0; i < kStartWaitSteps && !srv.is_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (!srv.is_running()) return make_error("the metrics listener did not start");
  return m;
}

void MetricsServer::publish(std::shared_ptr<const MetricsSnapshot> snapshot) {
  std::lock_guard lock(mu_);
  snapshot_ = std::move(snapshot);
}

std::shared_ptr<const MetricsSnapshot> MetricsServer::snapshot() const {
  std::lock_guard lock(mu_);
  return snapshot_;
}

}  // namespace edgeshed::daemon
