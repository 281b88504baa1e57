#include "daemon/state_file.h"

#include <unistd.h>

#include <cmath>

namespace edgeshed::daemon {
namespace {

int64_t ms(std::chrono::nanoseconds d) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}

// A broken reading (NaN, infinity) shows as no reading.
std::optional<double> finite(double v) {
  return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

std::optional<uint32_t> limited(uint32_t v) {
  return v == law::kUnlimited ? std::nullopt : std::optional<uint32_t>(v);
}

ipc::LatencyView latency_view(const std::optional<LatencyStats>& m) {
  if (!m) return {};
  return {m->count, ipc::LatencyView::Figures{finite(m->rate_per_s), finite(m->p50_s * 1e3),
                                              finite(m->p90_s * 1e3), finite(m->p99_s * 1e3),
                                              finite(m->mean_s * 1e3)}};
}

}  // namespace

ipc::State make_state(const StateSnapshot& s) {
  const auto& d = s.decision;
  ipc::State st;
  st.pid = getpid();
  st.config = s.config_path;
  st.monotonic_ms = ms(s.now);
  st.tick_ms = ms(s.tick);
  st.level = names::name_of(d.level);
  st.level_since_ms = ms(s.level_since);
  st.level_pinned = d.level_pinned;
  st.pressure = finite(d.pressure);
  st.drivers = d.drivers;
  st.mode = names::name_of(d.mode);
  st.fail_open = d.fail_open;
  st.all_stale = d.all_stale;
  st.adaptive_limit = d.adaptive_limit;
  st.adaptive_limit_open = d.adaptive_limit_open;
  if (const auto& k = d.limit_knowledge) {
    st.learnt = ipc::LearntView{k->floor_seconds * 1e3, k->rate, k->inflight, k->peak_inflight,
                                k->readings};
  }
  st.interfaces = s.interfaces;
  for (const auto& sig : s.signals) {
    ipc::SignalView g;
    g.name = sig.config.name;
    // Through a view: a plain string copy here makes g++ 12 see the optional
    // value below as maybe-uninitialized (-Werror).
    g.kind = std::string_view(sig.config.kind);
    if (sig.has_sample) {
      g.value = finite(sig.last_good.value);
      g.pressure = finite(sig.last_good.value / sig.config.target);
      g.age_ms = ms(s.now - sig.last_good.taken);
    }
    g.target = sig.config.target;
    g.stale = sig.stale;
    g.hard_safety = sig.config.hard_safety;
    g.error = sig.last_error;
    st.signals.push_back(std::move(g));
  }
  if (s.latency) {
    st.latency.emplace();
    for (const auto& [port, l] : *s.latency) {
      st.latency->push_back({port == signals::kAllPorts ? "all" : std::to_string(port),
                             latency_view(l.response), latency_view(l.connection)});
    }
  }
  for (auto c : law::kAllClasses) {
    const auto& p = d.policy(c);
    st.classes.push_back({std::string(names::name_of(c)), finite(p.admit_fraction),
                          limited(p.inflight_cap), limited(p.tokens_per_sec)});
  }
  st.runtime_changes = s.runtime_changes;
  st.metrics = s.metrics;
  return st;
}

}  // namespace edgeshed::daemon
