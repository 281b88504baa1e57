// systemd's service protocol (Type=notify, WatchdogSec): readiness, reload,
// stop and watchdog pings. Every call is a no-op outside systemd.
#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace edgeshed::daemon {

class ServiceNotifier {
 public:
  ServiceNotifier();

  void ready(const std::string& status) const;
  void reloading() const;
  void stopping() const;
  void status(const std::string& text) const;
  // Pings the watchdog at most every half interval; call it every tick, so
  // a hung tick loop is what systemd sees die.
  void tick(std::chrono::nanoseconds now);

 private:
  std::optional<std::chrono::nanoseconds> watchdog_interval_;
  std::chrono::nanoseconds last_ping_{0};
};

}  // namespace edgeshed::daemon
