// What the limit learnt of the protected service, kept in the state directory
// across restarts and upgrades so that a restart starts warm (issue
// "Requests, not connections", point 3). Versioned; ignored when stale or
// when the service is not the one it was learnt from.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "law/limit_algorithm.h"

namespace edgeshed::daemon {

inline constexpr const char* kLearntStateFileName = "learnt.json";
inline constexpr int kLearntStateVersion = 1;
// A service's speed moves with its deploys and its daily mix: knowledge
// older than a day is a guess.
inline constexpr std::chrono::hours kLearntStateMaxAge{24};

// What names the service the knowledge is of: the protected TCP ports, and
// the user that listens on each (another program on the port is another
// service; the knowledge also has to agree with what the law measures).
struct ServiceIdentity {
  struct Listener {
    uint16_t port = 0;
    uint32_t uid = 0;
    bool operator==(const Listener&) const = default;
  };
  std::vector<uint16_t> ports;      // sorted
  std::vector<Listener> listeners;  // sorted by port; a port with none is absent
  bool operator==(const ServiceIdentity&) const = default;
};

struct LearntState {
  ServiceIdentity service;
  law::Knowledge knowledge;
  int64_t saved_unix_ms = 0;
};

std::string to_json_text(const LearntState& state);
Result<LearntState> parse_learnt_state(const std::string& text);

// The knowledge to start from, or why there is none (the file is missing,
// of another version, stale, or of another service).
Result<law::Knowledge> load_learnt_state(const std::string& dir, const ServiceIdentity& current,
                                         int64_t now_unix_ms);
Status save_learnt_state(const std::string& dir, const LearntState& state);

}  // namespace edgeshed::daemon
