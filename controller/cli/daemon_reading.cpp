#include "cli/daemon_reading.h"

#include <ctime>
#include <fstream>
#include <optional>

#include "cli/daemon_process.h"
#include "dataplane/maps.h"
#include "ipc/run_dir.h"
#include "ipc/start_history.h"
#include "ipc/state.h"

namespace edgeshed {
namespace {

using Json = nlohmann::ordered_json;

// The state file as the daemon wrote it, with "state_age_ms"; nullopt when
// there is none, or it is not the schema's.
struct StateRead {
  Json json;
  ipc::State state;
  int64_t age_ms = 0;
};
std::optional<StateRead> read_state_file(const std::string& run_dir) {
  std::ifstream in(run_dir + "/" + ipc::kStateFileName);
  if (!in) return std::nullopt;
  auto j = Json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return std::nullopt;
  auto state = ipc::parse_state(j);
  if (!state) return std::nullopt;
  const int64_t now_ms = static_cast<int64_t>(monotonic_ns() / 1000000);
  const int64_t age_ms = now_ms - state->monotonic_ms;
  j["state_age_ms"] = age_ms;
  return StateRead{std::move(j), std::move(*state), age_ms};
}

}  // namespace

int64_t realtime_ms() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

Json health_json(const DaemonHealth& health) {
  return {{"state", to_string(health.state)}, {"why", health.why}};
}

DaemonReading read_daemon(const std::string& run_dir) {
  DaemonFacts f;
  f.now_unix_ms = realtime_ms();
  auto read = read_state_file(run_dir);
  Json state = read ? std::move(read->json) : Json(nullptr);
  if (read) {
    f.has_state = true;
    f.pid = read->state.pid;
    f.alive = edgeshed_alive(f.pid);
    f.proc_state = f.alive ? proc_state(f.pid) : 0;
    f.state_age_ms = read->age_ms;
    f.tick_ms = read->state.tick_ms;
  }
  if (auto starts = ipc::read_start_history(run_dir)) f.starts = std::move(*starts);
  Json health = health_json(diagnose_daemon(f));
  if (!daemon_alive(f)) state = nullptr;  // a dead daemon's leftover
  return {std::move(state), std::move(health)};
}

}  // namespace edgeshed
