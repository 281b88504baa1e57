#include "daemon/learnt_state.h"

#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ipc/run_dir.h"

namespace edgeshed::daemon {

namespace {

using Json = nlohmann::json;

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

std::string to_json_text(const LearntState& state) {
  Json listeners = Json::array();
  for (const auto& l : state.service.listeners) {
    listeners.push_back({{"port", l.port}, {"uid", l.uid}});
  }
  const law::Knowledge& k = state.knowledge;
  const Json j = {
      {"version", kLearntStateVersion},
      {"saved_unix_ms", state.saved_unix_ms},
      {"service", {{"ports", state.service.ports}, {"listeners", listeners}}},
      {"capacity",
       {{"floor_seconds", k.floor_seconds},
        {"inflight", k.inflight},
        {"rate", k.rate},
        {"peak_inflight", k.peak_inflight},
        {"readings", k.readings},
        {"tail_seconds", k.tail_seconds}}},
  };
  return j.dump(2) + "\n";
}

Result<LearntState> parse_learnt_state(const std::string& text) {
  const Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return Error{"not a JSON object"};
  const auto version = j.find("version");
  if (version == j.end() || !version->is_number_integer()) return Error{"no \"version\""};
  if (version->get<int>() != kLearntStateVersion) {
    return Error{"version " + std::to_string(version->get<int>()) + ", this daemon reads " +
                 std::to_string(kLearntStateVersion)};
  }
  LearntState state;
  try {
    state.saved_unix_ms = j.at("saved_unix_ms").get<int64_t>();
    const Json& service = j.at("service");
    state.service.ports = service.at("ports").get<std::vector<uint16_t>>();
    for (const Json& l : service.at("listeners")) {
      state.service.listeners.push_back(
          {l.at("port").get<uint16_t>(), l.at("uid").get<uint32_t>()});
    }
    const Json& c = j.at("capacity");
    state.knowledge.floor_seconds = c.at("floor_seconds").get<double>();
    state.knowledge.inflight = c.at("inflight").get<uint32_t>();
    state.knowledge.rate = c.at("rate").get<double>();
    state.knowledge.peak_inflight = c.at("peak_inflight").get<uint32_t>();
    state.knowledge.readings = c.at("readings").get<uint64_t>();
    // Files of earlier versions have no tail: the gate waits for this run's.
    state.knowledge.tail_seconds = c.value("tail_seconds", 0.0);
  } catch (const Json::exception& e) {
    return Error{std::string("malformed: ") + e.what()};
  }
  const law::Knowledge& k = state.knowledge;
  if (!std::isfinite(k.floor_seconds) || k.floor_seconds <= 0.0 || !std::isfinite(k.rate) ||
      k.rate <= 0.0) {
    return Error{"malformed: the floor and the rate must be positive"};
  }
  if (!std::isfinite(k.tail_seconds) || k.tail_seconds < 0.0) {
    return Error{"malformed: the tail must be a positive time, or 0"};
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
