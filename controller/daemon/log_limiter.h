// Repeated errors of the tick loop (ten ticks a second) are logged once per
// interval per key, with the number suppressed in between.
#pragma once

#include <spdlog/spdlog.h>

#include <chrono>
#include <map>
#include <string>

namespace edgeshed::daemon {

class LogLimiter {
 public:
  explicit LogLimiter(std::chrono::nanoseconds interval) : interval_(interval) {}

  void error(const std::string& key, const std::string& message, std::chrono::nanoseconds now) {
    auto& e = entries_[key];
    if (e.logged_once && now - e.last < interval_) {
      ++e.suppressed;
      return;
    }
    if (e.suppressed) {
      spdlog::error("{} ({} more like it suppressed)", message, e.suppressed);
    } else {
      spdlog::error("{}", message);
    }
    e = {now, 0, true};
  }

 private:
  struct Entry {
    std::chrono::nanoseconds last{0};
    uint64_t suppressed = 0;
    bool logged_once = false;
  };
  std::chrono::nanoseconds interval_;
  std::map<std::string, Entry> entries_;
};

}  // namespace edgeshed::daemon
