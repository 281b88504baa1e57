// When the daemon reads and writes what the limit learnt (learnt_state.h):
// once at start, for a warm start; then about once a minute while the
// knowledge changes, and at a clean stop.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "law/limit_algorithm.h"

namespace edgeshed::daemon {

class LearntKeeper {
 public:
  static constexpr std::chrono::seconds kSaveEvery{60};

  // ports: the protected TCP ports, which name the service with their listeners.
  explicit LearntKeeper(std::vector<uint16_t> ports) : ports_(std::move(ports)) {}

  // What an earlier run learnt of this service, if anything usable; logs
  // what it found and why it is not used.
  std::optional<law::Knowledge> load(const std::string& dir, int64_t now_unix_ms);
  // Each tick; writes when the knowledge changed and kSaveEvery has passed
  // since the last write (always, with `now_or_never`: a clean stop).
  void keep(const std::optional<law::Knowledge>& knowledge, const std::string& dir,
            std::chrono::nanoseconds now, int64_t now_unix_ms, bool now_or_never = false);
  void set_ports(std::vector<uint16_t> ports) { ports_ = std::move(ports); }

 private:
  std::vector<uint16_t> ports_;
  std::optional<law::Knowledge> written_;
  std::optional<std::chrono::nanoseconds> written_at_;
  bool failed_logged_ = false;
};

}  // namespace edgeshed::daemon
