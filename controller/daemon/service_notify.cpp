#include "daemon/service_notify.h"

#include <systemd/sd-daemon.h>
#include <ctime>

namespace edgeshed::daemon {
namespace {

uint64_t monotonic_usec() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000u + static_cast<uint64_t>(ts.tv_nsec) / 1000u;
}

}  // namespace

ServiceNotifier::ServiceNotifier() {
  uint64_t usec = 0;
  if (sd_watchdog_enabled(0, &usec) > 0 && usec > 0) {
    watchdog_interval_ = std::chrono::microseconds(usec);
  }
}

void ServiceNotifier::ready(const std::string& status) const {
  sd_notifyf(0, "READY=1\nSTATUS=%s", status.c_str());
}

void ServiceNotifier::reloading() const {
  sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%llu",
             static_cast<unsigned long long>(monotonic_usec()));
}

void ServiceNotifier::stopping() const { sd_notify(0, "STOPPING=1"); }

void ServiceNotifier::status(const std::string& text) const {
  sd_notifyf(0, "STATUS=%s", text.c_str());
}

void ServiceNotifier::tick(std::chrono::nanoseconds now) {
  if (!watchdog_interval_ || now - last_ping_ < *watchdog_interval_ / 2) return;
  sd_notify(0, "WATCHDOG=1");
  last_ping_ = now;
}

}  // namespace edgeshed::daemon
