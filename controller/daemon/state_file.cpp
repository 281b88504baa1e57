#include "daemon/state_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "common/fd.h"

namespace edgeshed::daemon {
namespace {

int64_t ms(std::chrono::nanoseconds d) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}

// JSON has no NaN or infinity; a broken reading shows as null.
nlohmann::ordered_json number(double v) {
  return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
}

}  // namespace

nlohmann::ordered_json to_json(const StateSnapshot& s) {
  const auto& d = s.decision;
  nlohmann::ordered_json j;
  j["pid"] = getpid();
  j["config"] = s.config_path;
  j["monotonic_ms"] = ms(s.now);
  j["tick_ms"] = ms(s.tick);
  j["level"] = law::to_string(d.level);
  j["level_since_ms"] = ms(s.level_since);
  j["level_pinned"] = d.level_pinned;
  j["pressure"] = number(d.pressure);
  j["drivers"] = d.drivers;
  j["mode"] = law::to_string(d.mode);
  j["fail_open"] = d.fail_open;
  j["all_stale"] = d.all_stale;
  j["adaptive_limit"] = d.adaptive_limit;
  j["interfaces"] = s.interfaces;
  j["signals"] = nlohmann::ordered_json::array();
  for (const auto& sig : s.signals) {
    nlohmann::ordered_json g;
    g["name"] = sig.config.name;
    g["kind"] = config::to_string(sig.config.kind);
    g["value"] = sig.has_sample ? number(sig.last_good.value) : nullptr;
    g["target"] = sig.config.target;
    g["pressure"] = sig.has_sample ? number(sig.last_good.value / sig.config.target) : nullptr;
    g["age_ms"] = sig.has_sample ? nlohmann::ordered_json(ms(s.now - sig.last_good.taken)) : nullptr;
    g["stale"] = sig.stale;
    g["hard_safety"] = sig.config.hard_safety;
    if (!sig.last_error.empty()) g["error"] = sig.last_error;
    j["signals"].push_back(g);
  }
  if (s.latency) {
    auto stats = [](const std::optional<signals::LatencyStats>& m) {
      if (!m) return nlohmann::ordered_json{{"count", 0}};
      return nlohmann::ordered_json{{"count", m->count},
                                    {"per_sec", number(m->rate_per_s)},
                                    {"p50_ms", number(m->p50_s * 1e3)},
                                    {"p90_ms", number(m->p90_s * 1e3)},
                                    {"p99_ms", number(m->p99_s * 1e3)},
                                    {"mean_ms", number(m->mean_s * 1e3)}};
    };
    j["latency"] = nlohmann::ordered_json::object();
    for (const auto& [port, l] : *s.latency) {
      const std::string key = port == signals::kAllPorts ? "all" : std::to_string(port);
      j["latency"][key] = {{"response", stats(l.response)}, {"connection", stats(l.connection)}};
    }
  }
  for (auto c : law::kAllClasses) {
    const auto& p = d.policy(c);
    nlohmann::ordered_json k;
    k["admit_fraction"] = number(p.admit_fraction);
    k["inflight_cap"] = p.inflight_cap == law::kUnlimited ? nlohmann::ordered_json(nullptr)
                                                          : nlohmann::ordered_json(p.inflight_cap);
    k["tokens_per_sec"] = p.tokens_per_sec == law::kUnlimited
                              ? nlohmann::ordered_json(nullptr)
                              : nlohmann::ordered_json(p.tokens_per_sec);
    j["classes"][std::string(law::to_string(c))] = k;
  }
  return j;
}

Status remove_file(const std::string& path) {
  if (std::remove(path.c_str()) != 0 && errno != ENOENT) {
    return make_error(path + ": cannot remove: " + std::strerror(errno));
  }
  return {};
}

Status write_file_atomically(const std::string& path, const std::string& content, mode_t mode) {
  std::string tmp = path + ".tmp";
  Fd fd(open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode));
  if (!fd.valid()) return make_error("cannot write " + tmp + ": " + std::strerror(errno));
  fchmod(fd.get(), mode);  // whatever the umask
  for (size_t done = 0; done < content.size();) {
    ssize_t n = write(fd.get(), content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return make_error("cannot write " + tmp + ": " + std::strerror(errno));
    done += static_cast<size_t>(n);
  }
  fd.reset();
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return make_error("cannot rename " + tmp + ": " + std::strerror(errno));
  }
  return {};
}

Status make_run_dir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return make_error("cannot create " + dir + ": " + ec.message());
  // Readable by all: the protected service reads the level file. What is
  // private (socket, runtime changes, locks) has its own mode.
  chmod(dir.c_str(), 0755);
  return {};
}

Status write_state(const nlohmann::ordered_json& state, const std::string& path) {
  return write_file_atomically(path, state.dump(1) + "\n", 0644);
}

}  // namespace edgeshed::daemon
