#include "daemon/metrics.h"

#include "common/names.h"
#include "common/stats.h"
#include "signals/parse/prometheus_text.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <limits>
#include <sstream>
#include <type_traits>

#ifndef EDGESHED_VERSION
#define EDGESHED_VERSION "unknown"
#endif

namespace edgeshed::daemon {
namespace {

struct Counter {
  int index;
  names::Verdict verdict;
  std::string_view reason;
};

// edgeshed_decisions_total: each per-class decision counter of the data
// plane under its verdict and reason. An admission's reason is why it was
// admitted; a shed's is the shed reason's name.
constexpr Counter kDecisions[] = {
    {EDGESHED_CTR_ADMITTED, names::Verdict::kAdmitted, "policy"},
    {EDGESHED_CTR_FAIL_OPEN, names::Verdict::kAdmitted, "fail_open"},
    {EDGESHED_CTR_PASS_MODE_OFF, names::Verdict::kAdmitted, "mode_off"},
    {EDGESHED_CTR_SHED_CAP, names::Verdict::kShed, names::kReasons[EDGESHED_REASON_CAP]},
    {EDGESHED_CTR_SHED_FRAC, names::Verdict::kShed, names::kReasons[EDGESHED_REASON_FRAC]},
    {EDGESHED_CTR_SHED_RATE, names::Verdict::kShed, names::kReasons[EDGESHED_REASON_RATE]},
    {EDGESHED_CTR_WOULD_SHED_CAP, names::Verdict::kWouldShed, names::kReasons[EDGESHED_REASON_CAP]},
    {EDGESHED_CTR_WOULD_SHED_FRAC, names::Verdict::kWouldShed,
     names::kReasons[EDGESHED_REASON_FRAC]},
    {EDGESHED_CTR_WOULD_SHED_RATE, names::Verdict::kWouldShed,
     names::kReasons[EDGESHED_REASON_RATE]},
};

class Writer {
 public:
  void family(const char* name, const char* type, const char* help) {
    out_ << "# HELP " << name << " " << help << "\n# TYPE " << name << " " << type << "\n";
  }
  Writer& sample(const std::string& name) {
    out_ << name;
    return *this;
  }
  Writer& labels(std::initializer_list<std::pair<const char*, std::string_view>> ls) {
    out_ << "{";
    bool first = true;
    for (const auto& [k, v] : ls) {
      out_ << (first ? "" : ",") << k << "=\"" << signals::escape_label_value(v) << "\"";
      first = false;
    }
    out_ << "}";
    return *this;
  }
  void value(double v) {
    out_ << " ";
    if (std::isnan(v)) {
      out_ << "NaN";
    } else if (std::isinf(v)) {
      out_ << (v > 0 ? "+Inf" : "-Inf");
    } else {
      out_ << v;
    }
    out_ << "\n";
  }
  template <class Int>
  requires std::is_integral_v<Int>
  void value(Int v) { out_ << " " << v << "\n"; }
  std::string str() const { return out_.str(); }

 private:
  std::ostringstream out_;
};

double limit_value(uint32_t v) {
  return v == law::kUnlimited ? std::numeric_limits<double>::infinity() : v;
}

std::string bound_text(double b) {
  std::ostringstream o;
  o << b;
  return o.str();
}

// A family of two TCP class counters per interface and class, told apart by
// one label (key = what).
struct LabelledCounter {
  const char* what;
  int counter;
};
struct PairFamily {
  const char* name;
  const char* help;
  const char* key;
  std::array<LabelledCounter, 2> pair;
};
constexpr PairFamily kPairFamilies[] = {
    {"edgeshed_rst_total",
     "Shed connections answered with a RST (sent) or dropped because the RST budget was spent "
     "(capped).",
     "result",
     {{{"sent", EDGESHED_CTR_RST_SENT}, {"capped", EDGESHED_CTR_RST_CAPPED}}}},
    {"edgeshed_requests_refused_total",
     "New requests on open connections of ports with keepalive = \"refuse\", over the class's "
     "cap: reset before the server read them (refused), or counted only in observe mode "
     "(would_refuse).",
     "verdict",
     {{{"refused", EDGESHED_CTR_REQUEST_REFUSED},
       {"would_refuse", EDGESHED_CTR_WOULD_REFUSE_REQUEST}}}},
    {"edgeshed_connections_reclaimed_total",
     "Idle connections of ports with keepalive = \"reclaim\" or \"refuse\", aborted while their "
     "class was over its cap (reclaimed), or counted only in observe mode (would_reclaim).",
     "verdict",
     {{{"reclaimed", EDGESHED_CTR_RECLAIMED}, {"would_reclaim", EDGESHED_CTR_WOULD_RECLAIM}}}},
};

// Every per-class counter of the data plane is exported once: a counter added
// to enum edgeshed_counter is a build error until kDecisions or kPairFamilies
// has it.
constexpr bool every_counter_exported_once() {
  std::array<int, EDGESHED_NUM_COUNTERS> uses{};
  for (const Counter& d : kDecisions) ++uses[d.index];
  for (const PairFamily& f : kPairFamilies) {
    for (const LabelledCounter& l : f.pair) ++uses[l.counter];
  }
  return std::ranges::all_of(uses, [](int n) { return n == 1; });
}
static_assert(every_counter_exported_once(), "a per-class counter missing from the metrics");

void class_pair_family(Writer& w, const MetricsSnapshot& s, const PairFamily& f) {
  w.family(f.name, "counter", f.help);
  for (const auto& i : s.interfaces) {
    for (auto c : law::kAllClasses) {
      for (const LabelledCounter& l : f.pair) {
        w.sample(f.name)
            .labels({{"iface", i.iface}, {"class", names::name_of(c)}, {f.key, l.what}})
            .value(i.stats.cls[law::index_of(c)][l.counter]);
      }
    }
  }
}

}  // namespace

void TickHistogram::observe(double seconds) {
  for (size_t i = 0; i < kBounds.size(); ++i) {
    if (seconds <= kBounds[i]) ++buckets_[i];
  }
  ++count_;
  sum_ += seconds;
}

std::string render_metrics(const MetricsSnapshot& s) {
  Writer w;
  w.family("edgeshed_build_info", "gauge",
           "Version of the running edgeshed and its data plane ABI.");
  w.sample("edgeshed_build_info")
      .labels({{"version", EDGESHED_VERSION}, {"abi", std::to_string(EDGESHED_ABI_VERSION)}})
      .value(uint64_t{1});

  w.family("edgeshed_decisions_total", "counter",
           "New connections to protected ports (TCP SYNs, QUIC Initials) decided by the data "
           "plane, by protocol, verdict and reason.");
  for (const auto& i : s.interfaces) {
    for (uint32_t proto = 0; proto < EDGESHED_NUM_PROTOCOLS; ++proto) {
      for (auto c : law::kAllClasses) {
        for (const auto& d : kDecisions) {
          // No in-flight cap applies to QUIC: the kernel counts no live QUIC connections.
          if (proto == EDGESHED_PROTO_QUIC &&
              (d.index == EDGESHED_CTR_SHED_CAP || d.index == EDGESHED_CTR_WOULD_SHED_CAP))
            continue;
          w.sample("edgeshed_decisions_total")
              .labels({{"iface", i.iface},
                       {"protocol", names::kProtocols[proto]},
                       {"class", names::name_of(c)},
                       {"verdict", names::name_of(d.verdict)},
                       {"reason", d.reason}})
              .value(class_row(i.stats, proto, law::index_of(c))[d.index]);
        }
      }
    }
  }
  for (const PairFamily& f : kPairFamilies) class_pair_family(w, s, f);
  w.family("edgeshed_packets_total", "counter",
           "Packets the data plane passed without a decision, and lost events, by kind.");
  for (const auto& i : s.interfaces) {
    for (std::size_t kind = 0; kind < names::kGlobalCounters.size(); ++kind) {
      w.sample("edgeshed_packets_total")
          .labels({{"iface", i.iface}, {"kind", names::kGlobalCounters[kind]}})
          .value(i.stats.global[kind]);
    }
  }

  w.family("edgeshed_pressure_level", "gauge",
           "Pressure level: 0 normal, 1 elevated, 2 high, 3 critical.");
  w.sample("edgeshed_pressure_level").value(static_cast<uint64_t>(law::index_of(s.level)));
  w.family("edgeshed_pressure", "gauge",
           "Highest signal pressure (value / target) among fresh signals; 1 is at target.");
  w.sample("edgeshed_pressure").value(s.pressure);
  w.family("edgeshed_level_pinned", "gauge", "1 while an operator pins the level.");
  w.sample("edgeshed_level_pinned").value(uint64_t{s.level_pinned ? 1u : 0u});
  w.family("edgeshed_mode", "gauge", "Data plane mode: 0 off, 1 observe, 2 enforce.");
  w.sample("edgeshed_mode").value(static_cast<uint64_t>(s.mode));
  w.family("edgeshed_fail_open", "gauge",
           "1 while the daemon admits everything because every signal is stale.");
  w.sample("edgeshed_fail_open").value(uint64_t{s.fail_open ? 1u : 0u});
  w.family("edgeshed_adaptive_limit", "gauge",
           "In-flight limit the limit algorithm learnt from latency.");
  w.sample("edgeshed_adaptive_limit").value(uint64_t{s.adaptive_limit});
  w.family("edgeshed_adaptive_limit_open", "gauge",
           "1 while the limit binds nowhere: no queue seen since the daemon started.");
  w.sample("edgeshed_adaptive_limit_open").value(uint64_t{s.adaptive_limit_open ? 1u : 0u});

  w.family("edgeshed_signal_value", "gauge", "Last good value of each pressure signal.");
  for (const auto& g : s.signals) {
    if (!g.value) continue;
    w.sample("edgeshed_signal_value")
        .labels({{"signal", g.name}, {"kind", g.kind}})
        .value(*g.value);
  }
  w.family("edgeshed_signal_target", "gauge", "Target of each signal: pressure 1.0.");
  for (const auto& g : s.signals) {
    w.sample("edgeshed_signal_target").labels({{"signal", g.name}}).value(g.target);
  }
  w.family("edgeshed_signal_stale", "gauge",
           "1 when a signal has no recent sample and is ignored for escalation.");
  for (const auto& g : s.signals) {
    w.sample("edgeshed_signal_stale")
        .labels({{"signal", g.name}})
        .value(uint64_t{g.stale ? 1u : 0u});
  }
  w.family("edgeshed_signal_age_seconds", "gauge", "Age of each signal's last good sample.");
  for (const auto& g : s.signals) {
    if (!g.age_seconds) continue;
    w.sample("edgeshed_signal_age_seconds").labels({{"signal", g.name}}).value(*g.age_seconds);
  }

  w.family("edgeshed_inflight", "gauge",
           "Requests in service of each class on the protected ports (what the limit caps).");
  for (auto c : law::kAllClasses) {
    w.sample("edgeshed_inflight")
        .labels({{"class", names::name_of(c)}})
        .value(s.inflight[law::index_of(c)]);
  }
  w.family("edgeshed_inflight_age_seconds", "gauge",
           "Mean age of the requests in service of each class: a queue shows here before its "
           "requests are answered.");
  for (auto c : law::kAllClasses) {
    const uint64_t count = s.inflight[law::index_of(c)];
    w.sample("edgeshed_inflight_age_seconds")
        .labels({{"class", names::name_of(c)}})
        .value(count ? static_cast<double>(s.inflight_age_ns[law::index_of(c)]) / count / 1e9
                     : 0.0);
  }
  w.family("edgeshed_queue_gate_age_seconds", "gauge",
           "Age past which most requests of a class still in service shed its new connections "
           "(the queue gate); 0 when none.");
  for (auto c : law::kAllClasses) {
    w.sample("edgeshed_queue_gate_age_seconds")
        .labels({{"class", names::name_of(c)}})
        .value(std::chrono::duration<double>(s.policies[law::index_of(c)].queue_age).count());
  }
  w.family("edgeshed_connections", "gauge",
           "Established connections of each class on the protected ports.");
  for (auto c : law::kAllClasses) {
    w.sample("edgeshed_connections")
        .labels({{"class", names::name_of(c)}})
        .value(s.connections[law::index_of(c)]);
  }
  w.family("edgeshed_limit", "gauge", "In-flight cap of each class; +Inf when none.");
  for (auto c : law::kAllClasses) {
    w.sample("edgeshed_limit")
        .labels({{"class", names::name_of(c)}})
        .value(limit_value(s.policies[law::index_of(c)].inflight_cap));
  }
  w.family("edgeshed_admit_fraction", "gauge", "Share of new connections of each class admitted.");
  for (auto c : law::kAllClasses) {
    w.sample("edgeshed_admit_fraction")
        .labels({{"class", names::name_of(c)}})
        .value(s.policies[law::index_of(c)].admit_fraction);
  }

  w.family("edgeshed_port_netns_found", "gauge",
           "1 while the network namespace a port's service runs in (a container's) is found; 0 "
           "while it is gone, and nothing is counted for the port.");
  for (const auto& p : s.port_namespaces) {
    w.sample("edgeshed_port_netns_found")
        .labels({{"port", std::to_string(p.port)}, {"netns", p.netns}})
        .value(uint64_t{p.found ? 1u : 0u});
  }

  w.family("edgeshed_level_changes_total", "counter", "Pressure level changes since start.");
  w.sample("edgeshed_level_changes_total").value(s.level_changes);
  w.family("edgeshed_config_reloads_total", "counter", "Config reloads (SIGHUP) by result.");
  w.sample("edgeshed_config_reloads_total").labels({{"result", "ok"}}).value(s.reloads_ok);
  w.sample("edgeshed_config_reloads_total").labels({{"result", "failed"}}).value(s.reloads_failed);

  w.family("edgeshed_tick_seconds", "histogram",
           "Time of one control tick: read signals and counters, decide, publish.");
  for (size_t i = 0; i < TickHistogram::kBounds.size(); ++i) {
    w.sample("edgeshed_tick_seconds_bucket")
        .labels({{"le", bound_text(TickHistogram::kBounds[i])}})
        .value(s.ticks.bucket(i));
  }
  w.sample("edgeshed_tick_seconds_bucket").labels({{"le", "+Inf"}}).value(s.ticks.count());
  w.sample("edgeshed_tick_seconds_sum").value(s.ticks.sum());
  w.sample("edgeshed_tick_seconds_count").value(s.ticks.count());
  return w.str();
}

}  // namespace edgeshed::daemon
