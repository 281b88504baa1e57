#include "daemon/runtime_changes.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/names.h"

namespace edgeshed::daemon {
namespace {

using nlohmann::json;

std::string for_text(const std::optional<WallTime>& until, WallTime now) {
  if (!until) return " until removed";
  auto s = std::chrono::duration_cast<std::chrono::seconds>(*until - now).count();
  return " for " + std::to_string(std::max<int64_t>(s, 0)) + " s";
}

std::string describe_override(const ClassOverride& o) {
  std::ostringstream out;
  if (o.admit_fraction) out << " admit_fraction=" << *o.admit_fraction;
  if (o.inflight_cap) out << " cap=" << *o.inflight_cap;
  if (o.tokens_per_sec) out << " rate=" << *o.tokens_per_sec << "/s";
  if (o.burst) out << " burst=" << *o.burst;
  return out.str();
}

template <class T>
bool expired(const std::optional<T>& change, WallTime now) {
  return change && change->until && *change->until <= now;
}

std::optional<std::chrono::nanoseconds> law_time(const std::optional<WallTime>& until,
                                                 WallTime now_wall,
                                                 std::chrono::nanoseconds now_law) {
  if (!until) return std::nullopt;
  return now_law + std::chrono::duration_cast<std::chrono::nanoseconds>(*until - now_wall);
}

// How long the change lasts; none: until removed.
std::optional<WallTime> until_of(const std::optional<double>& for_s, WallTime now) {
  if (!for_s) return std::nullopt;
  return now +
         std::chrono::duration_cast<WallTime::duration>(std::chrono::duration<double>(*for_s));
}

}  // namespace

Result<std::string> RuntimeChanges::apply(const json& request, WallTime now) {
  auto parsed = ipc::parse_request(request);
  if (!parsed) return parsed.error();
  return apply(*parsed, now);
}

Result<std::string> RuntimeChanges::apply(const ipc::Request& request, WallTime now) {
  if (const auto* r = std::get_if<ipc::ModeRequest>(&request)) {
    const auto until = until_of(r->for_s, now);
    mode_ = Timed<law::Mode>{r->mode, until};
    return "mode " + std::string(names::name_of(r->mode)) + for_text(until, now);
  }
  if (const auto* r = std::get_if<ipc::ActionRequest>(&request)) {
    const auto until = until_of(r->for_s, now);
    action_ = Timed<config::Action>{r->action, until};
    return "action " + std::string(names::name_of(r->action)) + for_text(until, now);
  }
  if (const auto* r = std::get_if<ipc::PinRequest>(&request)) {
    const auto until = until_of(r->for_s, now);
    level_ = Timed<law::Level>{r->level, until};
    return "level pinned at " + std::string(names::name_of(r->level)) + for_text(until, now);
  }
  if (const auto* r = std::get_if<ipc::OverrideRequest>(&request)) {
    ClassOverride o;
    o.until = until_of(r->for_s, now);
    o.admit_fraction = r->admit_fraction;
    o.inflight_cap = r->inflight_cap;
    o.tokens_per_sec = r->tokens_per_sec;
    o.burst = r->burst;
    classes_[law::index_of(r->traffic_class)] = o;
    return "class " + std::string(names::name_of(r->traffic_class)) +
           " overridden:" + describe_override(o) + for_text(o.until, now);
  }
  if (const auto* r = std::get_if<ipc::PortRequest>(&request)) {
    ports_[r->port] = r->traffic_class;
    return "port " + std::to_string(r->port) + " protected as " +
           std::string(names::name_of(r->traffic_class));
  }
  if (const auto* r = std::get_if<ipc::PortRemoveRequest>(&request)) {
    ports_[r->port] = std::nullopt;
    return "port " + std::to_string(r->port) + " unprotected";
  }
  if (const auto* r = std::get_if<ipc::PrefixRequest>(&request)) {
    const auto key = to_string(r->prefix);
    prefixes_[key] = r->traffic_class;
    return "prefix " + key + " classed " + std::string(names::name_of(r->traffic_class));
  }
  if (const auto* r = std::get_if<ipc::PrefixRemoveRequest>(&request)) {
    const auto key = to_string(r->prefix);
    prefixes_[key] = std::nullopt;
    return "prefix " + key + " override removed";
  }
  if (const auto* r = std::get_if<ipc::ResetRequest>(&request)) return reset(r->target);
  return make_error(std::string("'") + ipc::op_of(request) + "' changes nothing");
}

Result<std::string> RuntimeChanges::reset(const ipc::ResetTarget& target) {
  // Nothing to undo is done already: a runbook's reset may run twice.
  auto cleared = [](bool had, const std::string& text) -> Result<std::string> {
    if (!had) return "no runtime " + text + " to reset: already the config's";
    return text + " back to the config";
  };
  if (const auto* group = std::get_if<ipc::ResetGroup>(&target)) {
    switch (*group) {
      case ipc::ResetGroup::kAll: {
        const bool had = !empty();
        *this = RuntimeChanges{};
        return cleared(had, "changes");
      }
      case ipc::ResetGroup::kMode:
        return cleared(std::exchange(mode_, std::nullopt).has_value(), "mode");
      case ipc::ResetGroup::kAction:
        return cleared(std::exchange(action_, std::nullopt).has_value(), "action");
      case ipc::ResetGroup::kLevel:
        return cleared(std::exchange(level_, std::nullopt).has_value(), "level pin");
    }
    // Only a value cast outside the enum gets here.
    return make_error("cannot reset '" + ipc::to_string(target) + "'");
  }
  if (const auto* c = std::get_if<ipc::ResetClass>(&target)) {
    auto& o = classes_[law::index_of(c->traffic_class)];
    return cleared(std::exchange(o, std::nullopt).has_value(),
                   "override of class " + std::string(names::name_of(c->traffic_class)));
  }
  if (const auto* p = std::get_if<ipc::ResetPort>(&target)) {
    return cleared(ports_.erase(p->port) > 0, "port " + std::to_string(p->port));
  }
  const auto key = to_string(std::get<ipc::ResetPrefix>(target).prefix);
  return cleared(prefixes_.erase(key) > 0, "prefix " + key);
}

std::vector<std::string> RuntimeChanges::expire(WallTime now) {
  std::vector<std::string> out;
  if (expired(mode_, now)) {
    out.push_back("mode " + std::string(names::name_of(mode_->value)) + " expired");
    mode_.reset();
  }
  if (expired(action_, now)) {
    out.push_back("action " + std::string(names::name_of(action_->value)) + " expired");
    action_.reset();
  }
  if (expired(level_, now)) {
    out.push_back("level pin " + std::string(names::name_of(level_->value)) + " expired");
    level_.reset();
  }
  for (auto cls : law::kAllClasses) {
    auto& o = classes_[law::index_of(cls)];
    if (expired(o, now)) {
      out.push_back("override of class " + std::string(names::name_of(cls)) + " expired");
      o.reset();
    }
  }
  return out;
}

law::Overrides RuntimeChanges::law_overrides(WallTime now_wall,
                                             std::chrono::nanoseconds now_law) const {
  law::Overrides o;
  if (level_) o.level = law::LevelPin{level_->value, law_time(level_->until, now_wall, now_law)};
  if (mode_) o.mode = law::ModePin{mode_->value, law_time(mode_->until, now_wall, now_law)};
  for (size_t c = 0; c < law::kNumClasses; ++c) {
    const auto& src = classes_[c];
    if (!src) continue;
    law::ClassPin pin;
    pin.admit_fraction = src->admit_fraction;
    pin.inflight_cap = src->inflight_cap;
    pin.tokens_per_sec = src->tokens_per_sec;
    pin.burst = src->burst;
    pin.expires_at = law_time(src->until, now_wall, now_law);
    o.classes[c] = pin;
  }
  return o;
}

config::Config RuntimeChanges::applied_to(config::Config cfg) const {
  if (action_) cfg.dataplane.action = action_->value;
  // A port number's protocols share its class: a change applies to each of
  // them, and a port not configured yet is protected for TCP.
  for (const auto& [port, cls] : ports_) {
    auto same_port = [p = port](const config::PortConfig& pc) { return pc.port == p; };
    if (!cls) {
      std::erase_if(cfg.ports, same_port);
    } else if (std::none_of(cfg.ports.begin(), cfg.ports.end(), same_port)) {
      cfg.ports.push_back(
          {.port = port, .traffic_class = *cls, .latency_objective = {}, .netns = {}});
    } else {
      for (auto& pc : cfg.ports) {
        if (same_port(pc)) pc.traffic_class = *cls;  // the rest of the port's config stays
      }
    }
  }
  for (const auto& [cidr, cls] : prefixes_) {
    auto prefix = parse_ip_prefix(cidr).value();  // canonical when stored
    std::erase_if(cfg.prefixes,
                  [&](const config::PrefixConfig& pc) { return pc.prefix == prefix; });
    if (cls) cfg.prefixes.push_back({prefix, *cls});
  }
  return cfg;
}

bool RuntimeChanges::empty() const {
  return !mode_ && !action_ && !level_ && ports_.empty() && prefixes_.empty() &&
         std::none_of(classes_.begin(), classes_.end(),
                      [](const auto& o) { return o.has_value(); });
}

ipc::ActiveChanges RuntimeChanges::describe(WallTime now) const {
  ipc::ActiveChanges c;
  auto left = [&](const std::optional<WallTime>& until) -> std::optional<double> {
    if (!until) return std::nullopt;
    return std::max<double>(0, std::chrono::duration<double>(*until - now).count());
  };
  if (mode_) c.mode = {std::string(names::name_of(mode_->value)), left(mode_->until)};
  if (action_) c.action = {std::string(names::name_of(action_->value)), left(action_->until)};
  if (level_) c.level = {std::string(names::name_of(level_->value)), left(level_->until)};
  for (auto cls : law::kAllClasses) {
    const auto& o = classes_[law::index_of(cls)];
    if (!o) continue;
    c.classes.push_back({std::string(names::name_of(cls)), o->admit_fraction, o->inflight_cap,
                         o->tokens_per_sec, o->burst, left(o->until)});
  }
  auto class_name = [](const std::optional<law::TrafficClass>& cls) {
    return cls ? std::optional<std::string>(names::name_of(*cls)) : std::nullopt;
  };
  for (const auto& [port, cls] : ports_) c.ports.push_back({std::to_string(port), class_name(cls)});
  for (const auto& [cidr, cls] : prefixes_) c.prefixes.push_back({cidr, class_name(cls)});
  return c;
}

std::vector<SavedChange> RuntimeChanges::saved() const {
  std::vector<SavedChange> out;
  if (mode_) out.push_back({ipc::ModeRequest{mode_->value, std::nullopt}, mode_->until});
  if (action_) out.push_back({ipc::ActionRequest{action_->value, std::nullopt}, action_->until});
  if (level_) out.push_back({ipc::PinRequest{level_->value, std::nullopt}, level_->until});
  for (auto cls : law::kAllClasses) {
    const auto& o = classes_[law::index_of(cls)];
    if (!o) continue;
    out.push_back({ipc::OverrideRequest{cls, o->admit_fraction, o->inflight_cap, o->tokens_per_sec,
                                        o->burst, std::nullopt},
                   o->until});
  }
  for (const auto& [port, cls] : ports_) {
    if (cls) {
      out.push_back({ipc::PortRequest{port, *cls}, std::nullopt});
    } else {
      out.push_back({ipc::PortRemoveRequest{port}, std::nullopt});
    }
  }
  for (const auto& [cidr, cls] : prefixes_) {
    auto prefix = parse_ip_prefix(cidr).value();  // canonical when stored
    if (cls) {
      out.push_back({ipc::PrefixRequest{prefix, *cls}, std::nullopt});
    } else {
      out.push_back({ipc::PrefixRemoveRequest{prefix}, std::nullopt});
    }
  }
  return out;
}

json RuntimeChanges::to_json() const { return saved_changes_json(saved()); }

// Replayed through apply(), so a file can hold nothing apply() would refuse.
Result<RuntimeChanges> RuntimeChanges::from_json(const json& j) {
  auto saved = parse_saved_changes(j);
  if (!saved) return saved.error();
  RuntimeChanges r;
  for (auto& change : *saved) {
    // An expiry is replayed as "one second from a second before it".
    WallTime now = WallTime{};
    if (change.until) {
      now = *change.until - std::chrono::seconds(1);
      std::visit(
          [](auto& request) {
            if constexpr (requires { request.for_s; }) request.for_s = 1.0;
          },
          change.request);
    }
    if (auto applied = r.apply(change.request, now); !applied) return applied.error();
  }
  return r;
}

}  // namespace edgeshed::daemon
