#include "daemon/state_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

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

Status write_state(const nlohmann::ordered_json& state, const std::string& path) {
  std::error_code ec;
  auto dir = std::filesystem::path(path).parent_path();
  std::filesystem::create_directories(dir, ec);
  chmod(dir.c_str(), 0755);
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return make_error("cannot write " + tmp + ": " + std::strerror(errno));
    out << state.dump(1) << "\n";
    if (!out) return make_error("cannot write " + tmp + ": " + std::strerror(errno));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return make_error("cannot rename " + tmp + ": " + std::strerror(errno));
  }
  return {};
}

}  // namespace edgeshed::daemon
