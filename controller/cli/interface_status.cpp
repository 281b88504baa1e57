#include "cli/interface_status.h"

#include <string_view>

#include "common/names.h"

namespace edgeshed {
namespace {

using Json = nlohmann::ordered_json;

std::string key(std::string_view name) { return std::string(name); }

Json counters_json(const CounterRow& row) {
  Json j = Json::object();
  for (size_t i = 0; i < names::kCounters.size(); ++i) j[key(names::kCounters[i])] = row.values[i];
  return j;
}

CounterRow counters_from(const Json& j) {
  CounterRow row;
  for (size_t i = 0; i < names::kCounters.size(); ++i) {
    row.values[i] = j.at(key(names::kCounters[i])).get<uint64_t>();
  }
  return row;
}

template <class T>
void put_optional(Json& j, const char* name, const std::optional<T>& v) {
  if (v) j[name] = *v;
}

template <class T>
std::optional<T> optional_from(const Json& j, const char* name) {
  auto it = j.find(name);
  if (it == j.end() || it->is_null()) return std::nullopt;
  return it->get<T>();
}

Json to_json(const PortStatus& p) {
  return {{"port", p.port},
          {"class", p.traffic_class},
          {"protocols", p.protocols},
          {"keepalive", p.keepalive}};
}

PortStatus port_from(const Json& j) {
  return {j.at("port").get<uint32_t>(), j.at("class").get<std::string>(),
          j.at("protocols").get<std::vector<std::string>>(), j.at("keepalive").get<std::string>()};
}

Json to_json(const ClassStatus& k) {
  return {{"shed_fraction", k.shed_fraction},
          {"inflight_cap", k.inflight_cap},
          {"tokens_per_sec", k.tokens_per_sec},
          {"burst", k.burst},
          {"inflight", k.inflight},
          {"connections", k.connections},
          {"connection_cap", k.connection_cap},
          {"counters", counters_json(k.counters)}};
}

ClassStatus class_from(const Json& j) {
  ClassStatus k;
  k.shed_fraction = j.at("shed_fraction").get<double>();
  k.inflight_cap = j.at("inflight_cap").get<uint32_t>();
  k.tokens_per_sec = j.at("tokens_per_sec").get<uint32_t>();
  k.burst = j.at("burst").get<uint32_t>();
  k.inflight = j.at("inflight").get<uint64_t>();
  k.connections = j.at("connections").get<uint64_t>();
  k.connection_cap = j.at("connection_cap").get<uint32_t>();
  k.counters = counters_from(j.at("counters"));
  return k;
}

Json to_json(const ClassRates& r) {
  return {
      {"admitted", r.admitted},           {"shed", r.shed},           {"shed_cap", r.shed_cap},
      {"shed_fraction", r.shed_fraction}, {"shed_rate", r.shed_rate}, {"would_shed", r.would_shed},
      {"fail_open", r.fail_open},         {"rst_sent", r.rst_sent},   {"rst_capped", r.rst_capped}};
}

ClassRates rates_from(const Json& j) {
  ClassRates r;
  r.admitted = j.at("admitted").get<double>();
  r.shed = j.at("shed").get<double>();
  r.shed_cap = j.at("shed_cap").get<double>();
  r.shed_fraction = j.at("shed_fraction").get<double>();
  r.shed_rate = j.at("shed_rate").get<double>();
  r.would_shed = j.at("would_shed").get<double>();
  r.fail_open = j.at("fail_open").get<double>();
  r.rst_sent = j.at("rst_sent").get<double>();
  r.rst_capped = j.at("rst_capped").get<double>();
  return r;
}

// {"critical": ..., "normal": ..., "background": ...}, in the classes' order.
template <class T, class F>
Json by_class(const std::array<T, EDGESHED_NUM_CLASSES>& rows, F&& row_json) {
  Json j = Json::object();
  for (size_t c = 0; c < names::kClasses.size(); ++c)
    j[key(names::kClasses[c])] = row_json(rows[c]);
  return j;
}

template <class T, class F>
std::array<T, EDGESHED_NUM_CLASSES> by_class_from(const Json& j, F&& row_from) {
  std::array<T, EDGESHED_NUM_CLASSES> rows{};
  for (size_t c = 0; c < names::kClasses.size(); ++c) {
    rows[c] = row_from(j.at(key(names::kClasses[c])));
  }
  return rows;
}

}  // namespace

Json to_json(const InterfaceStatus& s) {
  Json j = {{"iface", s.iface}};
  if (s.error) {
    j["error"] = *s.error;
    return j;
  }
  j["abi_version"] = s.abi_version;
  j["hook"] = s.hook;
  j["mode"] = s.mode;
  j["action"] = s.action;
  j["draw"] = s.draw;
  j["heartbeat_timeout_ms"] = s.heartbeat_timeout_ms;
  j["heartbeat_age_ms"] = s.heartbeat_age_ms ? Json(*s.heartbeat_age_ms) : Json(nullptr);
  j["fail_open"] = s.fail_open;
  put_optional(j, "fail_open_reason", s.fail_open_reason);
  j["events_per_sec_per_cpu"] = s.events_per_sec_per_cpu;
  j["rst_per_sec_per_cpu"] = s.rst_per_sec_per_cpu;
  const auto& reflect = s.rst_reflect;
  j["rst_reflect"] = {{"per_sec", reflect.per_sec},
                      {"burst", reflect.burst},
                      {"prefix_v4", reflect.prefix_v4},
                      {"prefix_v6", reflect.prefix_v6},
                      {"per_conn", reflect.per_conn}};
  j["hash_prefix_v4"] = s.hash_prefix_v4;
  j["hash_prefix_v6"] = s.hash_prefix_v6;
  j["level"] = s.level;
  j["policy_generation"] = s.policy_generation;
  j["ports"] = Json::array();
  for (const auto& p : s.ports) j["ports"].push_back(to_json(p));
  j["classes"] = by_class(s.classes, [](const ClassStatus& k) { return to_json(k); });
  j["quic"] = {{"classes", by_class(s.quic.classes,
                                    [](const CounterRow& row) {
                                      return Json{{"counters", counters_json(row)}};
                                    })},
               {"protected", s.quic.protected_ports},
               {"inflight_cap", "not applied: the kernel counts no live QUIC connections"}};
  Json counters = Json::object();
  for (size_t i = 0; i < names::kGlobalCounters.size(); ++i) {
    counters[key(names::kGlobalCounters[i])] = s.counters[i];
  }
  j["counters"] = counters;
  if (s.rates) {
    j["rates"] = {
        {"interval_s", s.rates->interval_s},
        {"classes", by_class(s.rates->classes, [](const ClassRates& r) { return to_json(r); })}};
  }
  put_optional(j, "fail_static_note", s.fail_static_note);
  return j;
}

Result<InterfaceStatus> interface_status_from_json(const Json& j) {
  InterfaceStatus s;
  try {
    s.iface = j.at("iface").get<std::string>();
    s.error = optional_from<std::string>(j, "error");
    if (s.error) return s;
    s.abi_version = j.at("abi_version").get<uint32_t>();
    s.hook = j.at("hook").get<std::string>();
    s.mode = j.at("mode").get<std::string>();
    s.action = j.at("action").get<std::string>();
    s.draw = j.at("draw").get<std::string>();
    s.heartbeat_timeout_ms = j.at("heartbeat_timeout_ms").get<uint64_t>();
    s.heartbeat_age_ms = optional_from<uint64_t>(j, "heartbeat_age_ms");
    s.fail_open = j.at("fail_open").get<bool>();
    s.fail_open_reason = optional_from<std::string>(j, "fail_open_reason");
    s.events_per_sec_per_cpu = j.at("events_per_sec_per_cpu").get<uint32_t>();
    s.rst_per_sec_per_cpu = j.at("rst_per_sec_per_cpu").get<uint32_t>();
    const Json& reflect = j.at("rst_reflect");
    s.rst_reflect = {reflect.at("per_sec").get<uint32_t>(), reflect.at("burst").get<uint32_t>(),
                     reflect.at("prefix_v4").get<uint32_t>(),
                     reflect.at("prefix_v6").get<uint32_t>(),
                     reflect.at("per_conn").get<uint32_t>()};
    s.hash_prefix_v4 = j.at("hash_prefix_v4").get<uint32_t>();
    s.hash_prefix_v6 = j.at("hash_prefix_v6").get<uint32_t>();
    s.level = j.at("level").get<uint32_t>();
    s.policy_generation = j.at("policy_generation").get<uint64_t>();
    for (const auto& p : j.at("ports")) s.ports.push_back(port_from(p));
    s.classes = by_class_from<ClassStatus>(j.at("classes"), class_from);
    const Json& quic = j.at("quic");
    s.quic.classes = by_class_from<CounterRow>(
        quic.at("classes"), [](const Json& k) { return counters_from(k.at("counters")); });
    s.quic.protected_ports = quic.at("protected").get<bool>();
    const Json& counters = j.at("counters");
    for (size_t i = 0; i < names::kGlobalCounters.size(); ++i) {
      s.counters[i] = counters.at(key(names::kGlobalCounters[i])).get<uint64_t>();
    }
    if (auto it = j.find("rates"); it != j.end()) {
      s.rates = RatesStatus{it->at("interval_s").get<double>(),
                            by_class_from<ClassRates>(it->at("classes"), rates_from)};
    }
    s.fail_static_note = optional_from<std::string>(j, "fail_static_note");
  } catch (const nlohmann::json::exception& e) {
    return make_error("interface status: " + std::string(e.what()));
  }
  return s;
}

}  // namespace edgeshed
