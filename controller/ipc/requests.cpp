#include "ipc/requests.h"

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string_view>

namespace edgeshed::ipc {
namespace {

using nlohmann::json;

Result<std::string> string_field(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return make_error(std::string("missing ") + key);
  return it->get<std::string>();
}

// "for_s": how long the change lasts; absent or null: until removed.
Result<std::optional<double>> for_field(const json& j) {
  auto it = j.find("for_s");
  if (it == j.end() || it->is_null()) return std::optional<double>{};
  if (!it->is_number() || !(it->get<double>() > 0) || it->get<double>() > kMaxForSeconds) {
    return make_error("--for must be over 0 and at most 7 days");
  }
  return std::optional<double>(it->get<double>());
}

Result<std::optional<uint32_t>> count_field(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::optional<uint32_t>{};
  if (!it->is_number_integer() || it->get<int64_t>() < 1 ||
      it->get<int64_t>() > static_cast<int64_t>(kMaxCount)) {
    return make_error(std::string(key) + " must be an integer in 1.." + std::to_string(kMaxCount));
  }
  return std::optional<uint32_t>(static_cast<uint32_t>(it->get<int64_t>()));
}

Result<uint16_t> port_field(const json& j) {
  auto it = j.find("port");
  if (it == j.end() || !it->is_number_integer() || it->get<int64_t>() < 1 ||
      it->get<int64_t>() > 65535) {
    return make_error("port must be in 1..65535");
  }
  return static_cast<uint16_t>(it->get<int64_t>());
}

Result<law::TrafficClass> class_field(const json& j) {
  auto name = string_field(j, "class");
  if (!name) return name.error();
  return names::parse<law::TrafficClass>(*name);
}

Result<IpPrefix> prefix_field(const json& j) {
  auto cidr = string_field(j, "cidr");
  if (!cidr) return cidr.error();
  auto prefix = parse_ip_prefix(*cidr);
  if (!prefix) return make_error("prefix '" + *cidr + "': " + prefix.error().message);
  return prefix;
}

Result<config::Action> parse_action(const std::string& name) {
  if (auto action = names::find<config::Action>(name)) return *action;
  return make_error("action must be " + names::one_of(names::kActions) + ", not '" + name + "'");
}

void put_for(json& j, const std::optional<double>& for_s) {
  if (for_s) j["for_s"] = *for_s;
}

// Each request's fields, without its op.
json fields(const PingRequest& /*request*/) { return json::object(); }
json fields(const ModeRequest& r) {
  json j = {{"mode", names::name_of(r.mode)}};
  put_for(j, r.for_s);
  return j;
}
json fields(const ActionRequest& r) {
  json j = {{"action", names::name_of(r.action)}};
  put_for(j, r.for_s);
  return j;
}
json fields(const PinRequest& r) {
  json j = {{"level", names::name_of(r.level)}};
  put_for(j, r.for_s);
  return j;
}
json fields(const OverrideRequest& r) {
  json j = {{"class", names::name_of(r.traffic_class)}};
  if (r.admit_fraction) j["admit_fraction"] = *r.admit_fraction;
  if (r.inflight_cap) j["inflight_cap"] = *r.inflight_cap;
  if (r.tokens_per_sec) j["tokens_per_sec"] = *r.tokens_per_sec;
  if (r.burst) j["burst"] = *r.burst;
  put_for(j, r.for_s);
  return j;
}
json fields(const PortRequest& r) {
  return {{"port", r.port}, {"class", names::name_of(r.traffic_class)}};
}
json fields(const PortRemoveRequest& r) { return {{"port", r.port}}; }
json fields(const PrefixRequest& r) {
  return {{"cidr", to_string(r.prefix)}, {"class", names::name_of(r.traffic_class)}};
}
json fields(const PrefixRemoveRequest& r) { return {{"cidr", to_string(r.prefix)}}; }
json fields(const ResetRequest& r) {
  json j = {{"what", reset_kind(r.target)}};
  if (const auto* c = std::get_if<ResetClass>(&r.target)) {
    j["class"] = names::name_of(c->traffic_class);
  } else if (const auto* p = std::get_if<ResetPort>(&r.target)) {
    j["port"] = p->port;
  } else if (const auto* x = std::get_if<ResetPrefix>(&r.target)) {
    j["cidr"] = to_string(x->prefix);
  }
  return j;
}

Result<Request> parse_ping(const json& /*j*/) { return Request{PingRequest{}}; }

Result<Request> parse_mode_request(const json& j) {
  auto for_s = for_field(j);
  if (!for_s) return for_s.error();
  auto name = string_field(j, "mode");
  if (!name) return name.error();
  auto mode = names::parse<law::Mode>(*name);
  if (!mode) return mode.error();
  return Request{ModeRequest{*mode, *for_s}};
}

Result<Request> parse_action_request(const json& j) {
  auto for_s = for_field(j);
  if (!for_s) return for_s.error();
  auto name = string_field(j, "action");
  if (!name) return name.error();
  auto action = parse_action(*name);
  if (!action) return action.error();
  return Request{ActionRequest{*action, *for_s}};
}

Result<Request> parse_pin_request(const json& j) {
  auto for_s = for_field(j);
  if (!for_s) return for_s.error();
  auto name = string_field(j, "level");
  if (!name) return name.error();
  auto level = names::parse<law::Level>(*name);
  if (!level) return level.error();
  return Request{PinRequest{*level, *for_s}};
}

Result<Request> parse_override_request(const json& j) {
  auto for_s = for_field(j);
  if (!for_s) return for_s.error();
  auto cls = class_field(j);
  if (!cls) return cls.error();
  OverrideRequest r;
  r.traffic_class = *cls;
  r.for_s = *for_s;
  if (auto it = j.find("admit_fraction"); it != j.end() && !it->is_null()) {
    if (!it->is_number() || it->get<double>() < 0 || it->get<double>() > 1) {
      return make_error("admit fraction must be in 0.0..1.0");
    }
    r.admit_fraction = it->get<double>();
  }
  auto cap = count_field(j, "inflight_cap");
  auto rate = count_field(j, "tokens_per_sec");
  auto burst = count_field(j, "burst");
  for (const auto* c : {&cap, &rate, &burst}) {
    if (!*c) return c->error();
  }
  r.inflight_cap = *cap;
  r.tokens_per_sec = *rate;
  r.burst = *burst;
  if (r.burst && !r.tokens_per_sec) return make_error("a burst needs a rate");
  if (!r.admit_fraction && !r.inflight_cap && !r.tokens_per_sec) {
    return make_error("give at least one of admit fraction, cap or rate");
  }
  return Request{r};
}

Result<Request> parse_port_request(const json& j) {
  auto port = port_field(j);
  if (!port) return port.error();
  auto cls = class_field(j);
  if (!cls) return cls.error();
  return Request{PortRequest{*port, *cls}};
}

Result<Request> parse_port_remove_request(const json& j) {
  auto port = port_field(j);
  if (!port) return port.error();
  return Request{PortRemoveRequest{*port}};
}

Result<Request> parse_prefix_request(const json& j) {
  auto prefix = prefix_field(j);
  if (!prefix) return prefix.error();
  auto cls = class_field(j);
  if (!cls) return cls.error();
  return Request{PrefixRequest{*prefix, *cls}};
}

Result<Request> parse_prefix_remove_request(const json& j) {
  auto prefix = prefix_field(j);
  if (!prefix) return prefix.error();
  return Request{PrefixRemoveRequest{*prefix}};
}

// The same fields as the requests that made the change, so the same checks.
Result<Request> parse_reset_request(const json& j) {
  if (!j.contains("what")) return Request{ResetRequest{}};
  auto what = string_field(j, "what");
  if (!what) return what.error();
  if (*what == "class") {
    auto cls = class_field(j);
    if (!cls) return make_error("reset class: " + cls.error().message);
    return Request{ResetRequest{ResetClass{*cls}}};
  }
  if (*what == "port") {
    auto port = port_field(j);
    if (!port) return make_error("reset port: " + port.error().message);
    return Request{ResetRequest{ResetPort{*port}}};
  }
  if (*what == "prefix") {
    auto prefix = prefix_field(j);
    if (!prefix) return make_error("reset prefix: " + prefix.error().message);
    return Request{ResetRequest{ResetPrefix{*prefix}}};
  }
  if (what->find(':') != std::string::npos) {
    // The string form of earlier releases: one parser, and a client of
    // another release learns what this daemon takes.
    return make_error("reset '" + *what +
                      "': an earlier release's form; this daemon takes \"what\": \"class\", "
                      "\"port\" or \"prefix\" with the \"class\", \"port\" or \"cidr\" field "
                      "(use the edgeshed CLI of the daemon's version)");
  }
  auto target = parse_reset_target(*what);
  if (!target) return target.error();
  return Request{ResetRequest{*target}};
}

using Parser = std::function<Result<Request>(const json&)>;

const std::map<std::string_view, Parser>& parsers() {
  static const std::map<std::string_view, Parser> kParsers = {
      {PingRequest::kOp, parse_ping},
      {ModeRequest::kOp, parse_mode_request},
      {ActionRequest::kOp, parse_action_request},
      {PinRequest::kOp, parse_pin_request},
      {OverrideRequest::kOp, parse_override_request},
      {PortRequest::kOp, parse_port_request},
      {PortRemoveRequest::kOp, parse_port_remove_request},
      {PrefixRequest::kOp, parse_prefix_request},
      {PrefixRemoveRequest::kOp, parse_prefix_remove_request},
      {ResetRequest::kOp, parse_reset_request},
  };
  return kParsers;
}

}  // namespace

const char* op_of(const Request& request) {
  return std::visit([](const auto& r) { return std::decay_t<decltype(r)>::kOp; }, request);
}

json to_json(const Request& request) {
  json j = {{"op", op_of(request)}};
  j.update(std::visit([](const auto& r) { return fields(r); }, request));
  return j;
}

Result<Request> parse_request(const json& j) {
  if (!j.is_object()) return make_error("malformed request: not a JSON object");
  auto op = string_field(j, "op");
  if (!op) return op.error();
  const auto& all = parsers();
  auto it = all.find(*op);
  if (it == all.end()) return make_error("unknown request '" + *op + "'");
  return it->second(j);
}

json to_json(const Reply& reply) {
  if (!reply.ok) return {{"ok", false}, {"error", reply.message}};
  json j = {{"ok", true}};
  if (!reply.message.empty()) j["message"] = reply.message;
  if (reply.pid) j["pid"] = *reply.pid;
  if (!reply.warning.empty()) j["warning"] = reply.warning;
  return j;
}

Result<Reply> parse_reply(const json& j) {
  if (!j.is_object()) return make_error("malformed reply from the daemon: not a JSON object");
  auto ok = j.find("ok");
  if (ok == j.end() || !ok->is_boolean()) {
    return make_error("malformed reply from the daemon: no \"ok\"");
  }
  Reply r;
  r.ok = ok->get<bool>();
  const char* text_key = r.ok ? "message" : "error";
  if (auto it = j.find(text_key); it != j.end()) {
    if (!it->is_string()) {
      return make_error(std::string("malformed reply from the daemon: \"") + text_key +
                        "\" is not a string");
    }
    r.message = it->get<std::string>();
  }
  if (auto it = j.find("warning"); it != j.end()) {
    if (!it->is_string()) {
      return make_error("malformed reply from the daemon: \"warning\" is not a string");
    }
    r.warning = it->get<std::string>();
  }
  if (auto it = j.find("pid"); it != j.end()) {
    if (!it->is_number_integer()) {
      return make_error("malformed reply from the daemon: \"pid\" is not an integer");
    }
    r.pid = it->get<int>();
  }
  return r;
}

}  // namespace edgeshed::ipc
