#include "daemon/learnt_state.h"

#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include "ipc/json_fields.h"
#include "ipc/run_dir.h"

namespace edgeshed::daemon {

namespace {

// "ports 80 (uid 33), 443": each port with the user listening on it.
std::string describe(const ServiceIdentity& s) {
  std::string text = s.ports.size() == 1 ? "port" : "ports";
  for (size_t i = 0; i < s.ports.size(); ++i) {
    text += (i == 0 ? " " : ", ") + std::to_string(s.ports[i]);
    for (const auto& l : s.listeners) {
      if (l.port == s.ports[i]) text += " (uid " + std::to_string(l.uid) + ")";
    }
  }
  return text;
}

// The listeners of both: a port whose listener is not up now (the service
// starting after the daemon) says nothing against the knowledge.
bool same_service(const ServiceIdentity& saved, const ServiceIdentity& current) {
  if (saved.ports != current.ports) return false;
  for (const auto& now : current.listeners) {
    for (const auto& then : saved.listeners) {
      if (now.port == then.port && now.uid != then.uid) return false;
    }
  }
  return true;
}

}  // namespace
}  // namespace edgeshed::daemon

// The learnt-state file, one definition a struct; `version` is written and
// checked apart, before anything else is read.
namespace edgeshed::ipc::fields {

template <>
struct Definition<daemon::ServiceIdentity::Listener> {
  using L = daemon::ServiceIdentity::Listener;
  static constexpr auto kFields = std::tuple{field("port", &L::port), field("uid", &L::uid)};
};

template <>
struct Definition<daemon::ServiceIdentity> {
  using S = daemon::ServiceIdentity;
  static constexpr auto kFields =
      std::tuple{field("ports", &S::ports), field("listeners", &S::listeners)};
};

// The tail came later: a file without it still loads, with 0.
template <>
struct Definition<law::Knowledge> {
  using K = law::Knowledge;
  static constexpr auto kFields = std::tuple{
      field("floor_seconds", &K::floor_seconds),
      field("inflight", &K::inflight),
      field("rate", &K::rate),
      field("peak_inflight", &K::peak_inflight),
      field("readings", &K::readings),
      defaulted("tail_seconds", &K::tail_seconds),
  };
};

template <>
struct Definition<daemon::LearntState> {
  using S = daemon::LearntState;
  static constexpr auto kFields = std::tuple{
      field("saved_unix_ms", &S::saved_unix_ms),
      field("service", &S::service),
      field("capacity", &S::knowledge),
  };
};

}  // namespace edgeshed::ipc::fields

namespace edgeshed::daemon {

std::string to_json_text(const LearntState& state) {
  // Keys sorted, as the file always had them (nlohmann::json is a sorted map).
  nlohmann::json j = ipc::fields::write(state);
  j["version"] = kLearntStateVersion;
  return j.dump(2) + "\n";
}

Result<LearntState> parse_learnt_state(const std::string& text) {
  const auto j = nlohmann::ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return Error{"not a JSON object"};
  const auto version = j.find("version");
  if (version == j.end() || !version->is_number_integer()) return Error{"no \"version\""};
  if (version->get<int>() != kLearntStateVersion) {
    return Error{"version " + std::to_string(version->get<int>()) + ", this daemon reads " +
                 std::to_string(kLearntStateVersion)};
  }
  LearntState state;
  if (auto s = ipc::fields::read(j, "", state); !s) return Error{"malformed: " + s.error().message};
  const law::Knowledge& k = state.knowledge;
  if (!std::isfinite(k.floor_seconds) || k.floor_seconds <= 0.0 || !std::isfinite(k.rate) ||
      k.rate <= 0.0) {
    return Error{"malformed: the floor and the rate must be positive"};
  }
  if (!std::isfinite(k.tail_seconds) || k.tail_seconds < 0.0) {
    return Error{"malformed: the tail must be finite and not negative"};
  }
  return state;
}

Result<law::Knowledge> load_learnt_state(const std::string& dir, const ServiceIdentity& current,
                                         int64_t now_unix_ms) {
  const std::string path = dir + "/" + kLearntStateFileName;
  std::ifstream in(path);
  if (!in) return Error{path + ": " + std::strerror(errno)};
  std::stringstream text;
  text << in.rdbuf();
  auto state = parse_learnt_state(text.str());
  if (!state) return Error{path + ": " + state.error().message};
  const int64_t age_ms = now_unix_ms - state->saved_unix_ms;
  const int64_t max_age_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(kLearntStateMaxAge).count();
  if (age_ms > max_age_ms || age_ms < 0) {
    return Error{path + ": stale, saved " + std::to_string(age_ms / 60'000) + " min ago (at most " +
                 std::to_string(kLearntStateMaxAge.count()) + " h)"};
  }
  if (!same_service(state->service, current)) {
    return Error{path + ": of another service (" + describe(state->service) + "; now " +
                 describe(current) + ")"};
  }
  return state->knowledge;
}

Status save_learnt_state(const std::string& dir, const LearntState& state) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return Error{"cannot create the state directory " + dir + ": " + std::strerror(errno)};
  }
  return ipc::write_file_atomically(dir + "/" + kLearntStateFileName, to_json_text(state), 0600);
}

}  // namespace edgeshed::daemon
