#include "ipc/state.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <tuple>

#include "ipc/json_fields.h"
#include "ipc/run_dir.h"

namespace edgeshed::ipc {
namespace {

using Json = nlohmann::ordered_json;
using fields::field;

// {"mode": "enforce", "left_s": 30}: the change's value under the key of
// the change itself.
struct TimedCodec {
  const char* key;

  Json write(const std::optional<TimedChangeView>& t) const {
    return Json{{key, t->value},
                {"left_s", fields::Value<std::optional<double>>{}.write(t->left_s)}};
  }
  Status read(const Json& j, const std::string& path, std::optional<TimedChangeView>& out) const {
    static_assert(fields::member_count<TimedChangeView>() == 2, "TimedCodec writes every member");
    if (!j.is_object()) return fields::field_error(path, "is not an object");
    TimedChangeView t;
    if (auto s = fields::read_fields(std::tuple{field(key, &TimedChangeView::value),
                                                field("left_s", &TimedChangeView::left_s)},
                                     j, path, t);
        !s) {
      return s;
    }
    out = std::move(t);
    return {};
  }
};

// {"80": "critical", "443": "removed"}: a port or prefix and its class.
struct ClassedCodec {
  static constexpr const char* kRemoved = "removed";

  Json write(const std::vector<ClassedView>& list) const {
    static_assert(fields::member_count<ClassedView>() == 2, "ClassedCodec writes every member");
    Json j = Json::object();
    for (const auto& c : list) j[c.key] = c.traffic_class.value_or(kRemoved);
    return j;
  }
  Status read(const Json& j, const std::string& path, std::vector<ClassedView>& out) const {
    if (!j.is_object()) return fields::field_error(path, "is not an object");
    for (const auto& [key, v] : j.items()) {
      if (!v.is_string()) return fields::field_error(fields::path_of(path, key), "is not a string");
      const auto name = v.get<std::string>();
      out.push_back({key, name == kRemoved ? std::nullopt : std::optional<std::string>(name)});
    }
    return {};
  }
};

}  // namespace
}  // namespace edgeshed::ipc

// The state document, one definition a struct; JSON keys in this order.
namespace edgeshed::ipc::fields {

template <>
struct Definition<SignalView> {
  static constexpr auto kFields = std::tuple{
      field("name", &SignalView::name),         field("kind", &SignalView::kind),
      field("value", &SignalView::value),       field("target", &SignalView::target),
      field("pressure", &SignalView::pressure), field("age_ms", &SignalView::age_ms),
      field("stale", &SignalView::stale),       field("hard_safety", &SignalView::hard_safety),
      omit_empty("error", &SignalView::error),
  };
};

template <>
struct Definition<LatencyView::Figures> {
  using F = LatencyView::Figures;
  static constexpr auto kFields = std::tuple{
      field("per_sec", &F::per_sec), field("p50_ms", &F::p50_ms),   field("p90_ms", &F::p90_ms),
      field("p99_ms", &F::p99_ms),   field("mean_ms", &F::mean_ms),
  };
};

// None measured: {"count": 0} alone.
template <>
struct Definition<LatencyView> {
  static constexpr auto kFields = std::tuple{
      field("count", &LatencyView::count),
      inline_field(&LatencyView::figures),
  };
};

template <>
struct Definition<PortLatencyView> {
  static constexpr auto kFields = std::tuple{
      key_field(&PortLatencyView::port),
      field("response", &PortLatencyView::response),
      field("connection", &PortLatencyView::connection),
  };
};

template <>
struct Definition<LearntView> {
  static constexpr auto kFields = std::tuple{
      field("floor_ms", &LearntView::floor_ms), field("rate", &LearntView::rate),
      field("inflight", &LearntView::inflight), field("peak_inflight", &LearntView::peak_inflight),
      field("readings", &LearntView::readings),
  };
};

template <>
struct Definition<ClassPolicyView> {
  static constexpr auto kFields = std::tuple{
      key_field(&ClassPolicyView::name),
      field("admit_fraction", &ClassPolicyView::admit_fraction),
      field("inflight_cap", &ClassPolicyView::inflight_cap),
      field("tokens_per_sec", &ClassPolicyView::tokens_per_sec),
  };
};

template <>
struct Definition<ClassChangeView> {
  static constexpr auto kFields = std::tuple{
      key_field(&ClassChangeView::name),
      field("admit_fraction", &ClassChangeView::admit_fraction),
      field("inflight_cap", &ClassChangeView::inflight_cap),
      field("tokens_per_sec", &ClassChangeView::tokens_per_sec),
      field("burst", &ClassChangeView::burst),
      field("left_s", &ClassChangeView::left_s),
  };
};

// Only what is in force: no change at all is {}.
template <>
struct Definition<ActiveChanges> {
  static constexpr auto kFields = std::tuple{
      omit_empty("mode", &ActiveChanges::mode, TimedCodec{"mode"}),
      omit_empty("action", &ActiveChanges::action, TimedCodec{"action"}),
      omit_empty("level", &ActiveChanges::level, TimedCodec{"level"}),
      omit_empty("classes", &ActiveChanges::classes),
      omit_empty("ports", &ActiveChanges::ports, ClassedCodec{}),
      omit_empty("prefixes", &ActiveChanges::prefixes, ClassedCodec{}),
  };
};

template <>
struct Definition<State> {
  static constexpr auto kFields = std::tuple{
      field("pid", &State::pid),
      field("config", &State::config),
      field("monotonic_ms", &State::monotonic_ms),
      field("tick_ms", &State::tick_ms),
      field("level", &State::level),
      field("level_since_ms", &State::level_since_ms),
      field("level_pinned", &State::level_pinned),
      field("pressure", &State::pressure),
      field("drivers", &State::drivers),
      field("mode", &State::mode),
      field("fail_open", &State::fail_open),
      field("all_stale", &State::all_stale),
      field("adaptive_limit", &State::adaptive_limit),
      // Since the capacity limit's open start; a daemon before it has none.
      defaulted("adaptive_limit_open", &State::adaptive_limit_open),
      omit_empty("learnt", &State::learnt),
      field("interfaces", &State::interfaces),
      field("signals", &State::signals),
      omit_empty("latency", &State::latency),
      field("classes", &State::classes),
      field("runtime_changes", &State::runtime_changes),
      field("metrics", &State::metrics),
  };
};

}  // namespace edgeshed::ipc::fields

namespace edgeshed::ipc {

Json to_json(const ActiveChanges& changes) { return fields::write(changes); }

Result<ActiveChanges> parse_active_changes(const Json& j) {
  ActiveChanges changes;
  if (auto s = fields::read(j, "runtime_changes", changes); !s) return s.error();
  return changes;
}

Json to_json(const State& state) { return fields::write(state); }

Result<State> parse_state(const Json& j) {
  if (!j.is_object()) return Error{"not a JSON object"};
  State state;
  if (auto s = fields::read(j, "", state); !s) return s.error();
  return state;
}

Status write_state_file(const State& state, const std::string& path) {
  return write_file_atomically(path, to_json(state).dump(1) + "\n", 0644);
}

}  // namespace edgeshed::ipc
