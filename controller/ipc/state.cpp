#include "ipc/state.h"

#include <cmath>
#include <initializer_list>
#include <limits>
#include <nlohmann/json.hpp>
#include <type_traits>

#include "ipc/run_dir.h"

namespace edgeshed::ipc {
namespace {

using Json = nlohmann::ordered_json;

// JSON has no NaN or infinity: a broken number is null, like a missing one.
Json number(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? Json(*v) : Json(nullptr);
}

template <class T>
Json nullable(const std::optional<T>& v) {
  return v ? Json(*v) : Json(nullptr);
}

Error field_error(const std::string& where, const char* key, const char* what) {
  return {"\"" + where + key + "\" " + what};
}

// Reads one field of the schema into out; where names the enclosing object
// in errors ("signals[2].").
template <class T>
Status read(const Json& j, const std::string& where, const char* key, T& out) {
  auto it = j.find(key);
  if (it == j.end()) return field_error(where, key, "is missing");
  const Json& v = *it;
  if constexpr (std::is_same_v<T, bool>) {
    if (!v.is_boolean()) return field_error(where, key, "is not true or false");
    out = v.get<bool>();
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!v.is_string()) return field_error(where, key, "is not a string");
    out = v.get<std::string>();
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!v.is_number()) return field_error(where, key, "is not a number");
    out = v.get<T>();
  } else if constexpr (std::is_integral_v<T>) {
    if (!v.is_number_integer()) return field_error(where, key, "is not an integer");
    if constexpr (std::is_unsigned_v<T>) {
      if (!v.is_number_unsigned() || v.get<uint64_t>() > std::numeric_limits<T>::max()) {
        return field_error(where, key, "is out of range");
      }
    } else {
      const auto n = v.get<int64_t>();
      if (n < std::numeric_limits<T>::min() || n > std::numeric_limits<T>::max()) {
        return field_error(where, key, "is out of range");
      }
    }
    out = v.get<T>();
  } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
    if (!v.is_array()) return field_error(where, key, "is not a list");
    out.clear();
    for (const auto& s : v) {
      if (!s.is_string()) return field_error(where, key, "is not a list of strings");
      out.push_back(s.get<std::string>());
    }
  } else {
    static_assert(!sizeof(T), "no reader for this type");
  }
  return {};
}

// A field that must be there, and may be null.
template <class T>
Status read(const Json& j, const std::string& where, const char* key, std::optional<T>& out) {
  auto it = j.find(key);
  if (it == j.end()) return field_error(where, key, "is missing");
  if (it->is_null()) {
    out.reset();
    return {};
  }
  T value{};
  if (auto s = read(j, where, key, value); !s) return s;
  out = std::move(value);
  return {};
}

Status object_at(const Json& j, const std::string& where, const char* key, const Json*& out) {
  auto it = j.find(key);
  if (it == j.end()) return field_error(where, key, "is missing");
  if (!it->is_object()) return field_error(where, key, "is not an object");
  out = &*it;
  return {};
}

// Reads made in order, all of them: the first that failed says why.
Status first_error(std::initializer_list<Status> reads) {
  for (const auto& s : reads) {
    if (!s) return s;
  }
  return {};
}

Json to_json(const LatencyView& l) {
  if (!l.figures) return Json{{"count", l.count}};
  const auto& f = *l.figures;
  return Json{{"count", l.count},           {"per_sec", number(f.per_sec)},
              {"p50_ms", number(f.p50_ms)}, {"p90_ms", number(f.p90_ms)},
              {"p99_ms", number(f.p99_ms)}, {"mean_ms", number(f.mean_ms)}};
}

Result<LatencyView> parse_latency(const Json& j, const std::string& where) {
  if (!j.is_object()) return Error{"\"" + where + "\" is not an object"};
  const std::string in = where + ".";
  LatencyView l;
  if (auto status = read(j, in, "count", l.count); !status) return status.error();
  if (j.size() == 1) return l;
  LatencyView::Figures f;
  if (auto status = first_error({read(j, in, "per_sec", f.per_sec), read(j, in, "p50_ms", f.p50_ms),
                                 read(j, in, "p90_ms", f.p90_ms), read(j, in, "p99_ms", f.p99_ms),
                                 read(j, in, "mean_ms", f.mean_ms)});
      !status) {
    return status.error();
  }
  l.figures = f;
  return l;
}

Json timed(const char* key, const TimedChangeView& t) {
  return Json{{key, t.value}, {"left_s", number(t.left_s)}};
}

Status read_timed(const Json& j, const char* key, std::optional<TimedChangeView>& out) {
  auto it = j.find(key);
  if (it == j.end()) return {};
  const std::string where = std::string("runtime_changes.") + key + ".";
  if (!it->is_object())
    return Error{"\"runtime_changes." + std::string(key) + "\" is not an object"};
  TimedChangeView t;
  if (auto s = read(*it, where, key, t.value); !s) return s;
  if (auto s = read(*it, where, "left_s", t.left_s); !s) return s;
  out = t;
  return {};
}

Status read_classed(const Json& j, const char* key, std::vector<ClassedView>& out) {
  auto it = j.find(key);
  if (it == j.end()) return {};
  if (!it->is_object())
    return Error{"\"runtime_changes." + std::string(key) + "\" is not an object"};
  for (const auto& [k, v] : it->items()) {
    if (!v.is_string()) {
      return Error{"\"runtime_changes." + std::string(key) + "." + k + "\" is not a string"};
    }
    const auto name = v.get<std::string>();
    out.push_back({k, name == "removed" ? std::nullopt : std::optional<std::string>(name)});
  }
  return {};
}

}  // namespace

Json to_json(const ActiveChanges& c) {
  Json j = Json::object();
  if (c.mode) j["mode"] = timed("mode", *c.mode);
  if (c.action) j["action"] = timed("action", *c.action);
  if (c.level) j["level"] = timed("level", *c.level);
  for (const auto& k : c.classes) {
    j["classes"][k.name] = {{"admit_fraction", number(k.admit_fraction)},
                            {"inflight_cap", nullable(k.inflight_cap)},
                            {"tokens_per_sec", nullable(k.tokens_per_sec)},
                            {"burst", nullable(k.burst)},
                            {"left_s", number(k.left_s)}};
  }
  for (const auto& p : c.ports) j["ports"][p.key] = p.traffic_class.value_or("removed");
  for (const auto& p : c.prefixes) j["prefixes"][p.key] = p.traffic_class.value_or("removed");
  return j;
}

Result<ActiveChanges> parse_active_changes(const Json& j) {
  if (!j.is_object()) return Error{"\"runtime_changes\" is not an object"};
  ActiveChanges c;
  if (auto status = first_error({read_timed(j, "mode", c.mode), read_timed(j, "action", c.action),
                                 read_timed(j, "level", c.level)});
      !status) {
    return status.error();
  }
  if (auto it = j.find("classes"); it != j.end()) {
    if (!it->is_object()) return Error{"\"runtime_changes.classes\" is not an object"};
    for (const auto& [name, k] : it->items()) {
      const std::string where = "runtime_changes.classes." + name + ".";
      if (!k.is_object()) return Error{"\"" + where + "\" is not an object"};
      ClassChangeView v;
      v.name = name;
      if (auto status =
              first_error({read(k, where, "admit_fraction", v.admit_fraction),
                           read(k, where, "inflight_cap", v.inflight_cap),
                           read(k, where, "tokens_per_sec", v.tokens_per_sec),
                           read(k, where, "burst", v.burst), read(k, where, "left_s", v.left_s)});
          !status) {
        return status.error();
      }
      c.classes.push_back(std::move(v));
    }
  }
  if (auto status =
          first_error({read_classed(j, "ports", c.ports), read_classed(j, "prefixes", c.prefixes)});
      !status) {
    return status.error();
  }
  return c;
}

Json to_json(const State& s) {
  Json j;
  j["pid"] = s.pid;
  j["config"] = s.config;
  j["monotonic_ms"] = s.monotonic_ms;
  j["tick_ms"] = s.tick_ms;
  j["level"] = s.level;
  j["level_since_ms"] = s.level_since_ms;
  j["level_pinned"] = s.level_pinned;
  j["pressure"] = number(s.pressure);
  j["drivers"] = s.drivers;
  j["mode"] = s.mode;
  j["fail_open"] = s.fail_open;
  j["all_stale"] = s.all_stale;
  j["adaptive_limit"] = s.adaptive_limit;
  j["adaptive_limit_open"] = s.adaptive_limit_open;
  if (s.learnt) {
    j["learnt"] = {{"floor_ms", s.learnt->floor_ms},
                   {"rate", s.learnt->rate},
                   {"inflight", s.learnt->inflight},
                   {"peak_inflight", s.learnt->peak_inflight},
                   {"readings", s.learnt->readings}};
  }
  j["interfaces"] = s.interfaces;
  j["signals"] = Json::array();
  for (const auto& sig : s.signals) {
    Json g;
    g["name"] = sig.name;
    g["kind"] = sig.kind;
    g["value"] = number(sig.value);
    g["target"] = sig.target;
    g["pressure"] = number(sig.pressure);
    g["age_ms"] = nullable(sig.age_ms);
    g["stale"] = sig.stale;
    g["hard_safety"] = sig.hard_safety;
    if (!sig.error.empty()) g["error"] = sig.error;
    j["signals"].push_back(g);
  }
  if (s.latency) {
    j["latency"] = Json::object();
    for (const auto& l : *s.latency) {
      j["latency"][l.port] = {{"response", to_json(l.response)},
                              {"connection", to_json(l.connection)}};
    }
  }
  j["classes"] = Json::object();
  for (const auto& k : s.classes) {
    j["classes"][k.name] = {{"admit_fraction", number(k.admit_fraction)},
                            {"inflight_cap", nullable(k.inflight_cap)},
                            {"tokens_per_sec", nullable(k.tokens_per_sec)}};
  }
  j["runtime_changes"] = to_json(s.runtime_changes);
  j["metrics"] = nullable(s.metrics);
  return j;
}

Result<State> parse_state(const Json& j) {
  if (!j.is_object()) return Error{"not a JSON object"};
  State s;
  const std::string top;
  if (auto status = first_error(
          {read(j, top, "pid", s.pid), read(j, top, "config", s.config),
           read(j, top, "monotonic_ms", s.monotonic_ms), read(j, top, "tick_ms", s.tick_ms),
           read(j, top, "level", s.level), read(j, top, "level_since_ms", s.level_since_ms),
           read(j, top, "level_pinned", s.level_pinned), read(j, top, "pressure", s.pressure),
           read(j, top, "drivers", s.drivers), read(j, top, "mode", s.mode),
           read(j, top, "fail_open", s.fail_open), read(j, top, "all_stale", s.all_stale),
           read(j, top, "adaptive_limit", s.adaptive_limit),
           read(j, top, "interfaces", s.interfaces)});
      !status) {
    return status.error();
  }
  // Written since the capacity limit's open start; a daemon before it has none.
  if (j.contains("adaptive_limit_open")) {
    if (auto status = read(j, top, "adaptive_limit_open", s.adaptive_limit_open); !status) {
      return status.error();
    }
  }
  if (auto it = j.find("learnt"); it != j.end()) {
    LearntView v;
    const std::string where = "learnt.";
    if (auto status =
            first_error({read(*it, where, "floor_ms", v.floor_ms), read(*it, where, "rate", v.rate),
                         read(*it, where, "inflight", v.inflight),
                         read(*it, where, "peak_inflight", v.peak_inflight),
                         read(*it, where, "readings", v.readings)});
        !status) {
      return status.error();
    }
    s.learnt = v;
  }
  auto signals = j.find("signals");
  if (signals == j.end() || !signals->is_array()) return Error{"\"signals\" is not a list"};
  for (size_t i = 0; i < signals->size(); ++i) {
    const Json& g = (*signals)[i];
    const std::string where = "signals[" + std::to_string(i) + "].";
    if (!g.is_object()) return Error{"\"" + where + "\" is not an object"};
    SignalView v;
    if (auto status = first_error(
            {read(g, where, "name", v.name), read(g, where, "kind", v.kind),
             read(g, where, "value", v.value), read(g, where, "target", v.target),
             read(g, where, "pressure", v.pressure), read(g, where, "age_ms", v.age_ms),
             read(g, where, "stale", v.stale), read(g, where, "hard_safety", v.hard_safety)});
        !status) {
      return status.error();
    }
    if (g.contains("error")) {
      if (auto status = read(g, where, "error", v.error); !status) return status.error();
    }
    s.signals.push_back(std::move(v));
  }
  if (auto it = j.find("latency"); it != j.end()) {
    if (!it->is_object()) return Error{"\"latency\" is not an object"};
    s.latency.emplace();
    for (const auto& [port, l] : it->items()) {
      const std::string where = "latency." + port;
      if (!l.is_object() || !l.contains("response") || !l.contains("connection")) {
        return Error{"\"" + where + "\" needs response and connection"};
      }
      auto response = parse_latency(l["response"], where + ".response");
      if (!response) return response.error();
      auto connection = parse_latency(l["connection"], where + ".connection");
      if (!connection) return connection.error();
      s.latency->push_back({port, *response, *connection});
    }
  }
  const Json* classes = nullptr;
  if (auto status = object_at(j, top, "classes", classes); !status) return status.error();
  for (const auto& [name, k] : classes->items()) {
    const std::string where = "classes." + name + ".";
    if (!k.is_object()) return Error{"\"" + where + "\" is not an object"};
    ClassPolicyView v;
    v.name = name;
    if (auto status = first_error({read(k, where, "admit_fraction", v.admit_fraction),
                                   read(k, where, "inflight_cap", v.inflight_cap),
                                   read(k, where, "tokens_per_sec", v.tokens_per_sec)});
        !status) {
      return status.error();
    }
    s.classes.push_back(std::move(v));
  }
  const Json* changes = nullptr;
  if (auto status = object_at(j, top, "runtime_changes", changes); !status) return status.error();
  auto active = parse_active_changes(*changes);
  if (!active) return active.error();
  s.runtime_changes = std::move(*active);
  if (auto status = read(j, top, "metrics", s.metrics); !status) return status.error();
  return s;
}

Status write_state_file(const State& state, const std::string& path) {
  return write_file_atomically(path, to_json(state).dump(1) + "\n", 0644);
}

}  // namespace edgeshed::ipc
