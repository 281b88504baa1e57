#include "cli/interface_status.h"

#include <string>
#include <tuple>

#include "common/names.h"
#include "ipc/json_fields.h"

namespace edgeshed {
namespace {

using Json = nlohmann::ordered_json;
using ipc::fields::ByName;
using ipc::fields::constant;
using ipc::fields::field;
using ipc::fields::omit_empty;
using ipc::fields::Wrapped;

// A class's counters, keyed by names::kCounters.
struct CountersCodec {
  Json write(const CounterRow& row) const { return ByName<names::kCounters>{}.write(row.values); }
  Status read(const Json& j, const std::string& path, CounterRow& row) const {
    return ByName<names::kCounters>{}.read(j, path, row.values);
  }
};

// The status of every interface: its name, and why it could not be read.
constexpr auto kHead = std::tuple{
    field("iface", &InterfaceStatus::iface),
    omit_empty("error", &InterfaceStatus::error),
};

// The rest, of an interface that could be read.
constexpr auto kBody = std::tuple{
    field("abi_version", &InterfaceStatus::abi_version),
    field("hook", &InterfaceStatus::hook),
    field("mode", &InterfaceStatus::mode),
    field("action", &InterfaceStatus::action),
    field("draw", &InterfaceStatus::draw),
    field("heartbeat_timeout_ms", &InterfaceStatus::heartbeat_timeout_ms),
    ipc::fields::defaulted("heartbeat_age_ms", &InterfaceStatus::heartbeat_age_ms),
    field("fail_open", &InterfaceStatus::fail_open),
    omit_empty("fail_open_reason", &InterfaceStatus::fail_open_reason),
    field("events_per_sec_per_cpu", &InterfaceStatus::events_per_sec_per_cpu),
    field("rst_per_sec_per_cpu", &InterfaceStatus::rst_per_sec_per_cpu),
    field("rst_reflect", &InterfaceStatus::rst_reflect),
    field("hash_prefix_v4", &InterfaceStatus::hash_prefix_v4),
    field("hash_prefix_v6", &InterfaceStatus::hash_prefix_v6),
    field("level", &InterfaceStatus::level),
    field("policy_generation", &InterfaceStatus::policy_generation),
    field("ports", &InterfaceStatus::ports),
    field("classes", &InterfaceStatus::classes, ByName<names::kClasses>{}),
    field("quic", &InterfaceStatus::quic),
    field("counters", &InterfaceStatus::counters, ByName<names::kGlobalCounters>{}),
    omit_empty("rates", &InterfaceStatus::rates),
    omit_empty("fail_static_note", &InterfaceStatus::fail_static_note),
};

}  // namespace
}  // namespace edgeshed

// The status document, one definition a struct; JSON keys in this order.
namespace edgeshed::ipc::fields {

template <>
struct Definition<PortStatus> {
  static constexpr auto kFields = std::tuple{
      field("port", &PortStatus::port),
      field("class", &PortStatus::traffic_class),
      field("protocols", &PortStatus::protocols),
      field("keepalive", &PortStatus::keepalive),
      field("netns", &PortStatus::netns),
      omit_empty("timers", &PortStatus::timers),
      omit_empty("service", &PortStatus::service),
      omit_empty("service_inflight", &PortStatus::service_inflight),
      omit_empty("service_cap", &PortStatus::service_cap),
  };
};

template <>
struct Definition<ClassStatus> {
  static constexpr auto kFields = std::tuple{
      field("shed_fraction", &ClassStatus::shed_fraction),
      field("inflight_cap", &ClassStatus::inflight_cap),
      field("tokens_per_sec", &ClassStatus::tokens_per_sec),
      field("burst", &ClassStatus::burst),
      field("inflight", &ClassStatus::inflight),
      field("connections", &ClassStatus::connections),
      field("connection_cap", &ClassStatus::connection_cap),
      field("counters", &ClassStatus::counters, CountersCodec{}),
  };
};

template <>
struct Definition<RstReflectStatus> {
  static constexpr auto kFields = std::tuple{
      field("per_sec", &RstReflectStatus::per_sec),
      field("burst", &RstReflectStatus::burst),
      field("prefix_v4", &RstReflectStatus::prefix_v4),
      field("prefix_v6", &RstReflectStatus::prefix_v6),
      field("per_conn", &RstReflectStatus::per_conn),
  };
};

template <>
struct Definition<QuicStatus> {
  static constexpr auto kFields = std::tuple{
      field("classes", &QuicStatus::classes,
            ByName<names::kClasses, Wrapped<CountersCodec>>{{"counters"}}),
      field("protected", &QuicStatus::protected_ports),
      constant("inflight_cap", "not applied: the kernel counts no live QUIC connections"),
  };
};

template <>
struct Definition<ClassRates> {
  static constexpr auto kFields = std::tuple{
      field("admitted", &ClassRates::admitted),
      field("shed", &ClassRates::shed),
      field("shed_cap", &ClassRates::shed_cap),
      field("shed_fraction", &ClassRates::shed_fraction),
      field("shed_rate", &ClassRates::shed_rate),
      field("would_shed", &ClassRates::would_shed),
      field("fail_open", &ClassRates::fail_open),
      field("rst_sent", &ClassRates::rst_sent),
      field("rst_capped", &ClassRates::rst_capped),
  };
};

template <>
struct Definition<RatesStatus> {
  static constexpr auto kFields = std::tuple{
      field("interval_s", &RatesStatus::interval_s),
      field("classes", &RatesStatus::classes, ByName<names::kClasses>{}),
  };
};

template <>
struct Definition<InterfaceStatus> {
  static constexpr auto kFields = std::tuple_cat(kHead, kBody);
};

}  // namespace edgeshed::ipc::fields

namespace edgeshed {

// An unreadable interface is its name and its error alone.
Json to_json(const InterfaceStatus& s) {
  static_assert(ipc::fields::kComplete<InterfaceStatus>, "a member is in neither kHead nor kBody");
  Json j = Json::object();
  ipc::fields::write_fields(kHead, s, j);
  if (!s.error) ipc::fields::write_fields(kBody, s, j);
  return j;
}

Result<InterfaceStatus> interface_status_from_json(const Json& j) {
  InterfaceStatus s;
  auto read = [&] {
    if (!j.is_object()) return Status(ipc::fields::field_error("", "is not an object"));
    if (auto status = ipc::fields::read_fields(kHead, j, "", s); !status || s.error) return status;
    return ipc::fields::read_fields(kBody, j, "", s);
  };
  if (auto status = read(); !status) {
    return make_error("interface status: " + status.error().message);
  }
  return s;
}

}  // namespace edgeshed
