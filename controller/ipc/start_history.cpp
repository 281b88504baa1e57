#include "ipc/start_history.h"

#include <unistd.h>

#include <chrono>
#include <fstream>

#include <nlohmann/json.hpp>

#include "ipc/run_dir.h"

namespace edgeshed::ipc {
namespace {

std::string history_path(const std::string& run_dir) {
  return run_dir + "/" + kStartHistoryFileName;
}

int64_t unix_ms_now() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

Status write_history(const std::string& run_dir, const std::vector<StartRecord>& starts) {
  auto j = nlohmann::json::array();
  for (const auto& s : starts) {
    nlohmann::json r{{"unix_ms", s.unix_ms}, {"pid", s.pid}};
    if (!s.error.empty()) r["error"] = s.error;
    j.push_back(std::move(r));
  }
  // Errors can name config paths and addresses: root only, like the socket.
  return write_file_atomically(history_path(run_dir), j.dump() + "\n", 0600);
}

// A history that cannot be read is started anew: losing it costs only a
// diagnosis, refusing to start would cost the service.
std::vector<StartRecord> readable_history(const std::string& run_dir) {
  auto h = read_start_history(run_dir);
  return h ? std::move(*h) : std::vector<StartRecord>{};
}

}  // namespace

Result<std::vector<StartRecord>> read_start_history(const std::string& run_dir) {
  const std::string path = history_path(run_dir);
  std::ifstream in(path);
  if (!in) return std::vector<StartRecord>{};
  auto j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!j.is_array()) return make_error(path + ": not a JSON array of starts");
  std::vector<StartRecord> out;
  for (const auto& r : j) {
    if (!r.is_object() || !r.contains("unix_ms") || !r["unix_ms"].is_number_integer() ||
        !r.contains("pid") || !r["pid"].is_number_integer()) {
      return make_error(path + ": a start without unix_ms and pid");
    }
    StartRecord s{r["unix_ms"].get<int64_t>(), r["pid"].get<int>(), {}};
    if (r.contains("error") && r["error"].is_string()) s.error = r["error"].get<std::string>();
    out.push_back(std::move(s));
  }
  return out;
}

Status record_start(const std::string& run_dir, const std::string& error) {
  auto starts = readable_history(run_dir);
  starts.push_back({unix_ms_now(), getpid(), error});
  if (starts.size() > kMaxStartsKept) {
    starts.erase(starts.begin(), starts.end() - static_cast<std::ptrdiff_t>(kMaxStartsKept));
  }
  return write_history(run_dir, starts);
}

Status record_start_failure(const std::string& run_dir, const std::string& error) {
  auto starts = readable_history(run_dir);
  if (starts.empty() || starts.back().pid != getpid()) return record_start(run_dir, error);
  starts.back().error = error;
  return write_history(run_dir, starts);
}

Status forget_start_history(const std::string& run_dir) {
  return remove_file(history_path(run_dir));
}

}  // namespace edgeshed::ipc
