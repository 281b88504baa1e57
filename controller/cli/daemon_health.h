// Why the daemon is, or is not, deciding: what `edgeshed status` says when
// the data plane fails open or holds a policy nobody updates.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ipc/start_history.h"

namespace edgeshed {

// What can be read about the daemon without talking to it.
struct DaemonFacts {
  bool has_state = false;   // the run directory's state.json names a pid
  int pid = 0;              // of state.json
  bool alive = false;       // that pid exists
  char proc_state = 0;      // its state letter in /proc/PID/stat; 0 if unknown
  int64_t state_age_ms = 0;  // since state.json was last written (every tick)
  int64_t tick_ms = 0;       // the daemon's tick; 0 if unknown
  std::vector<ipc::StartRecord> starts;  // since the last clean stop, oldest first
  int64_t now_unix_ms = 0;
};

enum class DaemonState { kRunning, kStopped, kHung, kCrashLooping, kStartFailed, kDied, kNotRunning };

struct DaemonHealth {
  DaemonState state = DaemonState::kNotRunning;
  std::string why;  // one sentence an operator can act on
};

// A crash loop: this many starts within the window, none stopped cleanly.
inline constexpr size_t kCrashLoopStarts = 3;
inline constexpr int64_t kCrashLoopWindowMs = int64_t{60} * 1000;
// A live daemon whose state is older than this many ticks (and at least
// kHungMinMs) is hung: a slow signal read delays one tick, not ten.
inline constexpr int64_t kHungTicks = 10;
inline constexpr int64_t kHungMinMs = 2000;

// The state file's pid is a live edgeshed, not a zombie: even stopped or hung,
// it is the daemon, and its state file is its own.
bool daemon_alive(const DaemonFacts& facts);
DaemonHealth diagnose_daemon(const DaemonFacts& facts);
const char* to_string(DaemonState state);

}  // namespace edgeshed
