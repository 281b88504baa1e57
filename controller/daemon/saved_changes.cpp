#include "daemon/saved_changes.h"

#include <array>
#include <charconv>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace edgeshed::daemon {
namespace {

using nlohmann::json;

// Where each request lives in the file.
struct Section {
  const char* name;
  // cppcheck-suppress unusedStructMember ; read as s.op (cppcheck 2.10 misses it)
  const char* op;
  // Keyed sections: the request field that is the key; a null value is
  // removal_op's request, a string the request's class.
  const char* key = nullptr;
  const char* removal_op = nullptr;
};

constexpr std::array<Section, 6> kSections = {{
    {"mode", ipc::ModeRequest::kOp},
    {"action", ipc::ActionRequest::kOp},
    {"level", ipc::PinRequest::kOp},
    {"classes", ipc::OverrideRequest::kOp, "class"},
    {"ports", ipc::PortRequest::kOp, "port", ipc::PortRemoveRequest::kOp},
    {"prefixes", ipc::PrefixRequest::kOp, "cidr", ipc::PrefixRemoveRequest::kOp},
}};

const Section* section_of(std::string_view op) {
  for (const auto& s : kSections) {
    if (op == s.op || (s.removal_op && op == s.removal_op)) return &s;
  }
  return nullptr;
}

json until_json(const std::optional<WallTime>& until) {
  if (!until) return nullptr;
  return std::chrono::duration_cast<std::chrono::milliseconds>(until->time_since_epoch()).count();
}

std::optional<WallTime> until_from(const json& entry) {
  auto it = entry.find("until_ms");
  if (it == entry.end() || !it->is_number_integer()) return std::nullopt;
  return WallTime(std::chrono::milliseconds(it->get<int64_t>()));
}

// The file's key back as the request's field: a port is a number.
Result<json> key_field(const Section& s, const std::string& key) {
  if (std::string_view(s.key) != "port") return json(key);
  uint32_t port = 0;
  auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), port);
  if (ec != std::errc() || end != key.data() + key.size()) {
    return make_error(std::string(s.name) + ": '" + key + "' is not a port");
  }
  return json(port);
}

Result<SavedChange> decode(json request, const std::string& where) {
  std::optional<WallTime> until = until_from(request);
  request.erase("until_ms");
  auto parsed = ipc::parse_request(request);
  if (!parsed) return make_error(where + ": " + parsed.error().message);
  return SavedChange{*parsed, until};
}

}  // namespace

json saved_changes_json(const std::vector<SavedChange>& changes) {
  json j = json::object();
  for (const auto& change : changes) {
    json r = ipc::to_json(change.request);
    const std::string op = r["op"].get<std::string>();
    const Section* s = section_of(op);
    if (s == nullptr) continue;  // a ping or a reset changes nothing to save
    r.erase("op");
    if (s->key == nullptr) {
      r["until_ms"] = until_json(change.until);
      j[s->name] = r;
      continue;
    }
    const json& key_json = r[s->key];
    const std::string key = key_json.is_string() ? key_json.get<std::string>() : key_json.dump();
    if (s->removal_op != nullptr) {
      j[s->name][key] = op == s->removal_op ? json(nullptr) : r["class"];
    } else {
      r.erase(s->key);
      r["until_ms"] = until_json(change.until);
      j[s->name][key] = r;
    }
  }
  return j;
}

Result<std::vector<SavedChange>> parse_saved_changes(const json& j) {
  if (!j.is_object()) return make_error("not a JSON object");
  std::vector<SavedChange> out;
  for (const auto& s : kSections) {
    auto it = j.find(s.name);
    if (it == j.end()) continue;
    if (!it->is_object()) return make_error(std::string(s.name) + ": not a JSON object");
    if (s.key == nullptr) {
      json request = *it;
      request["op"] = s.op;
      auto change = decode(std::move(request), s.name);
      if (!change) return change.error();
      out.push_back(*change);
      continue;
    }
    for (const auto& [key, value] : it->items()) {
      auto field = key_field(s, key);
      if (!field) return field.error();
      json request = value.is_object() ? value : json::object();
      if (s.removal_op != nullptr) {
        request = json{{"op", value.is_null() ? s.removal_op : s.op}};
        if (!value.is_null()) request["class"] = value;
      } else {
        request["op"] = s.op;
      }
      request[s.key] = *field;
      auto change = decode(std::move(request), std::string(s.name) + " " + key);
      if (!change) return change.error();
      out.push_back(*change);
    }
  }
  return out;
}

}  // namespace edgeshed::daemon
