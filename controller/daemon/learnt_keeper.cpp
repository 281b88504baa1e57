#include "daemon/learnt_keeper.h"

#include <spdlog/spdlog.h>

#include <filesystem>

#include "daemon/learnt_state.h"
#include "daemon/service_identity.h"

namespace edgeshed::daemon {

std::optional<law::Knowledge> LearntKeeper::load(const std::string& dir, int64_t now_unix_ms) {
  const std::string path = dir + "/" + kLearntStateFileName;
  std::error_code error;
  if (!std::filesystem::exists(path, error)) {
    spdlog::info("nothing learnt of the service yet ({}): the limit starts cold", path);
    return std::nullopt;
  }
  auto knowledge = load_learnt_state(dir, current_service(ports_), now_unix_ms);
  if (!knowledge) {
    spdlog::warn("learnt state ignored, the limit starts cold: {}", knowledge.error().message);
    return std::nullopt;
  }
  spdlog::info(
      "warm start from {}: no-queue latency {:.1f} ms at {:.0f}/s with {} in service (at most {} "
      "while healthy), learnt over {} ticks; used once the service's own ticks agree with it",
      path, knowledge->floor_seconds * 1e3, knowledge->rate, knowledge->inflight,
      knowledge->peak_inflight, knowledge->readings);
  written_ = *knowledge;
  return *knowledge;
}

void LearntKeeper::keep(const std::optional<law::Knowledge>& knowledge, const std::string& dir,
                        std::chrono::nanoseconds now, int64_t now_unix_ms, bool now_or_never) {
  if (!knowledge || knowledge == written_) return;
  if (!now_or_never && written_at_ && now - *written_at_ < kSaveEvery) return;
  if (!written_at_ && !now_or_never) {
    // The first write a minute after the start, not at once: a run of a
    // few ticks has learnt nothing new.
    written_at_ = now;
    return;
  }
  written_at_ = now;
  LearntState state{current_service(ports_), *knowledge, now_unix_ms};
  if (auto s = save_learnt_state(dir, state); !s) {
    // Once: the limit works without it; a restart just starts cold.
    if (!failed_logged_) spdlog::warn("cannot keep what the limit learnt: {}", s.error().message);
    failed_logged_ = true;
    return;
  }
  failed_logged_ = false;
  written_ = knowledge;
}

}  // namespace edgeshed::daemon
