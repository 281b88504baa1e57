#include "cli/daemon_health.h"

#include <fmt/format.h>

#include <algorithm>

namespace edgeshed {
namespace {

size_t recent_starts(const DaemonFacts& f) {
  return static_cast<size_t>(std::count_if(f.starts.begin(), f.starts.end(), [&](const auto& s) {
    return f.now_unix_ms - s.unix_ms <= kCrashLoopWindowMs;
  }));
}

std::string ago(int64_t ms) {
  return ms < 10000 ? fmt::format("{} ms ago", ms) : fmt::format("{} s ago", ms / 1000);
}

std::string last_error(const DaemonFacts& f) {
  for (auto it = f.starts.rbegin(); it != f.starts.rend(); ++it) {
    if (!it->error.empty()) return fmt::format("; last failure ({}): {}", ago(f.now_unix_ms - it->unix_ms), it->error);
  }
  return "";
}

}  // namespace

const char* to_string(DaemonState state) {
  switch (state) {
    case DaemonState::kRunning: return "running";
    case DaemonState::kStopped: return "stopped";
    case DaemonState::kHung: return "hung";
    case DaemonState::kCrashLooping: return "crash_looping";
    case DaemonState::kStartFailed: return "start_failed";
    case DaemonState::kDied: return "died";
    case DaemonState::kNotRunning: return "not_running";
  }
  return "unknown";
}

bool daemon_alive(const DaemonFacts& f) { return f.has_state && f.alive && f.proc_state != 'Z'; }

DaemonHealth diagnose_daemon(const DaemonFacts& f) {
  const bool alive = daemon_alive(f);
  if (alive && (f.proc_state == 'T' || f.proc_state == 't')) {
    return {DaemonState::kStopped,
            fmt::format("the daemon (pid {}) is stopped (SIGSTOP, or a debugger holds it); its last "
                        "tick was {}",
                        f.pid, ago(f.state_age_ms))};
  }
  const int64_t hung_after = std::max(kHungTicks * f.tick_ms, kHungMinMs);
  if (alive && f.state_age_ms > hung_after) {
    return {DaemonState::kHung,
            fmt::format("the daemon (pid {}) is alive but has not ticked for {} ms (tick {} ms): "
                        "it is hung",
                        f.pid, f.state_age_ms, f.tick_ms)};
  }
  if (const size_t n = recent_starts(f); n >= kCrashLoopStarts) {
    return {DaemonState::kCrashLooping,
            fmt::format("the daemon is crash-looping: {} starts in the last {} s without a clean "
                        "stop{}{}",
                        n, kCrashLoopWindowMs / 1000, alive ? fmt::format(" (pid {} now)", f.pid) : "",
                        last_error(f))};
  }
  if (alive) return {DaemonState::kRunning, fmt::format("the daemon (pid {}) is running", f.pid)};
  if (!f.starts.empty() && !f.starts.back().error.empty()) {
    const auto& s = f.starts.back();
    return {DaemonState::kStartFailed,
            fmt::format("the daemon's last start ({}) failed: {}", ago(f.now_unix_ms - s.unix_ms), s.error)};
  }
  if (f.has_state || !f.starts.empty()) {
    const int pid = f.has_state ? f.pid : f.starts.back().pid;
    return {DaemonState::kDied,
            fmt::format("the daemon (pid {}) exited without stopping cleanly: it was killed or "
                        "crashed{}",
                        pid, f.has_state ? fmt::format(", its last tick was {}", ago(f.state_age_ms)) : "")};
  }
  return {DaemonState::kNotRunning, "the daemon is not running (it stopped cleanly, or never started)"};
}

}  // namespace edgeshed
