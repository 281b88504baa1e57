#include "daemon/tick.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <random>
#include <sstream>

#include "common/stats.h"
#include "daemon/policy_writer.h"

namespace edgeshed::daemon {
namespace {

uint32_t fresh_salt() {
  static std::random_device rd;
  return rd();
}

// "inflight=14.0/10 (1.40)" for each reading, stale ones marked.
std::string describe(const std::vector<law::SignalReading>& readings) {
  std::ostringstream out;
  for (const auto& r : readings) {
    if (out.tellp() > 0) out << ", ";
    out << r.name << "=" << r.value << "/" << r.target;
    if (r.stale) {
      out << " (stale)";
    } else if (r.target > 0) {
      out << " (" << r.value / r.target << ")";
    }
  }
  return out.str();
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ",") + n;
  return out.empty() ? "none" : out;
}

}  // namespace

Tick::Tick(DataplaneAccess& dataplane, TickClocks clocks, law::ControlLaw& law,
           RuntimeChangesKeeper& changes, TickPublisher& publisher, TickSettings settings)
    : dataplane_(dataplane),
      clocks_(clocks),
      law_(law),
      changes_(changes),
      publisher_(publisher),
      settings_(std::move(settings)) {}

signals::SignalSet::DataplaneReaders Tick::readers() {
  signals::SignalSet::DataplaneReaders r;
  r.inflight_total = [this]() -> Result<double> {
    if (!snapshot_.inflight) return snapshot_.inflight.error();
    double total = 0;
    for (uint64_t c : *snapshot_.inflight) total += static_cast<double>(c);
    return total;
  };
  r.accept_queue = [this] { return dataplane_.read_accept_queues(); };
  r.stats = [this] { return snapshot_.stats; };
  r.limit_use = [this]() -> Result<signals::LimitUse> {
    if (!snapshot_.inflight) return snapshot_.inflight.error();
    // Critical traffic has a floor of its own, above the limit.
    signals::LimitUse use;
    for (auto c : {law::TrafficClass::kNormal, law::TrafficClass::kBackground}) {
      use.inflight =
          std::max(use.inflight, static_cast<double>((*snapshot_.inflight)[law::index_of(c)]));
    }
    use.limit = adaptive_limit_;
    return use;
  };
  r.latency = [this] { return latency_.snapshot(); };
  return r;
}

void Tick::replace_signals(signals::SignalSet signals, TickSettings settings) {
  const size_t n = signals.states().size();
  signals_ = std::move(signals);
  settings_ = std::move(settings);
  was_stale_.assign(n, false);
  last_error_.assign(n, "");
}

void Tick::begin() {
  if (auto stats = read_dataplane().stats; stats) last_stats_ = *stats;
  salt_ = fresh_salt();
  salt_rotated_ = clocks_.steady.now();
  level_since_ = clocks_.steady.now();
}

DataplaneSnapshot Tick::read_dataplane() const {
  LiveCounts live{};
  edgeshed_stats stats{};
  DataplaneSnapshot snap;
  for (size_t i = 0; i < dataplane_.interface_count(); ++i) {
    const std::string& name = dataplane_.interface_name(i);
    if (auto counts = dataplane_.take_live_counts(i); !counts) {
      snap.inflight = make_error(name + ": " + counts.error().message);
    } else if (snap.inflight) {
      // Every interface of the daemon protects the same ports, and each
      // tracker counts every connection to them in this namespace, whichever
      // interface it came in on: the counts are the same connections, so
      // one is taken, not their sum. The largest, in case a tracker
      // attached later missed some.
      for (size_t c = 0; c < live.inflight.size(); ++c) {
        live.inflight[c] = std::max(live.inflight[c], counts->inflight[c]);
        live.peak_inflight[c] = std::max(live.peak_inflight[c], counts->peak_inflight[c]);
        live.connections[c] = std::max(live.connections[c], counts->connections[c]);
        live.inflight_age_ns[c] = std::max(live.inflight_age_ns[c], counts->inflight_age_ns[c]);
        live.queued[c] = live.queued[c] || counts->queued[c];
      }
    }
    auto s = dataplane_.read_stats(i);
    if (!s) {
      snap.stats = make_error(name + ": " + s.error().message);
      continue;
    }
    snap.per_interface.emplace_back(name, *s);
    if (snap.stats) add_stats(stats, *s);
  }
  if (snap.inflight) {
    snap.inflight = live.inflight;
    snap.peak_inflight = live.peak_inflight;
    snap.connections = live.connections;
    snap.inflight_age_ns = live.inflight_age_ns;
    snap.queued = live.queued;
  }
  if (snap.stats) snap.stats = stats;
  return snap;
}

void Tick::report(const std::string& key, const std::string& message, std::chrono::nanoseconds now,
                  std::vector<std::string>& errors) {
  errors_.error(key, message, now);
  errors.push_back(message);
}

// Logged on change only, so a broken source costs one line, not ten a second.
void Tick::log_signal_changes() {
  const auto& states = signals_.states();
  for (size_t i = 0; i < states.size(); ++i) {
    const auto& s = states[i];
    if (s.last_error != last_error_[i]) {
      if (s.last_error.empty()) {
        spdlog::info("signal {} recovered", s.config.name);
      } else {
        spdlog::warn("signal {}: {}", s.config.name, s.last_error);
      }
      last_error_[i] = s.last_error;
    }
    if (s.stale != was_stale_[i] && s.has_sample) {
      if (s.stale) {
        spdlog::warn(
            "signal {} is stale: no sample for over {} ms; ignored for escalation", s.config.name,
            std::chrono::duration_cast<std::chrono::milliseconds>(s.config.stale_after).count());
      }
      was_stale_[i] = s.stale;
    }
  }
}

law::TickInputs Tick::inputs(std::chrono::nanoseconds now, std::vector<std::string>& errors) {
  snapshot_ = read_dataplane();
  {
    std::vector<Result<std::vector<PortLatency>>> reads;
    reads.reserve(dataplane_.interface_count());
    for (size_t i = 0; i < dataplane_.interface_count(); ++i) {
      reads.push_back(dataplane_.read_latency(i));
    }
    latency_.update(now, reads);
  }
  law::TickInputs in;
  in.signals = signals_.sample(now);
  log_signal_changes();
  if (!settings_.latency_signal.empty()) {
    for (const auto& r : in.signals) {
      if (r.name == settings_.latency_signal && !r.stale) in.latency_seconds = r.value;
    }
  } else if (auto input = latency_.limit_input()) {
    // The kernel's response time, when no signal was named for the limit.
    in.latency_seconds = input->p90_s;
    in.tail_latency_seconds = input->p99_s;
    in.completions = input->last_tick_count;
  } else if (latency_.snapshot()) {
    in.completions = 0;  // read, and nothing completed in the window
  }

  if (const auto& counts = snapshot_.inflight; counts) {
    for (size_t c = 0; c < law::kNumClasses; ++c) {
      in.inflight[c] = static_cast<uint32_t>((*counts)[c]);
      in.peak_inflight[c] = static_cast<uint32_t>(snapshot_.peak_inflight[c]);
      in.queued[c] = snapshot_.queued[c];
    }
  } else {
    report("inflight", counts.error().message, now, errors);
  }
  if (const auto& stats = snapshot_.stats; stats) {
    for (size_t c = 0; c < law::kNumClasses; ++c) {
      for (uint32_t proto = 0; proto < EDGESHED_NUM_PROTOCOLS; ++proto) {
        in.sheds[c] += class_sheds(class_row(*stats, proto, c)) -
                       class_sheds(class_row(last_stats_, proto, c));
      }
      // A request refused on an open connection is the cap binding too.
      in.sheds[c] += stats->cls[c][EDGESHED_CTR_REQUEST_REFUSED] -
                     last_stats_.cls[c][EDGESHED_CTR_REQUEST_REFUSED];
    }
    in.gate_sheds =
        stats->global[EDGESHED_GCTR_QUEUE_GATE] - last_stats_.global[EDGESHED_GCTR_QUEUE_GATE];
    last_stats_ = *stats;
  } else {
    report("stats", stats.error().message, now, errors);
  }
  return in;
}

Status Tick::write_mode(size_t i, uint32_t mode) const {
  auto cfg = dataplane_.read_config(i);
  if (!cfg) return cfg.error();
  cfg->mode = mode;
  return dataplane_.write_config(i, *cfg);
}

void Tick::write_dataplane(const law::Decision& d, std::chrono::nanoseconds now,
                           std::vector<std::string>& errors) {
  if (now - salt_rotated_ >= settings_.salt_rotation) {
    salt_ = fresh_salt();
    salt_rotated_ = now;
  }
  const auto set = to_policy_set(d, ++generation_, settings_.max_connections);
  // A tick that does not write the mode acts as if it were written.
  const uint32_t mode = settings_.writes_mode ? static_cast<uint32_t>(d.mode) : mode_written_;
  bool mode_failed = false;
  for (size_t i = 0; i < dataplane_.interface_count(); ++i) {
    const std::string& name = dataplane_.interface_name(i);
    if (mode != mode_written_) {
      if (auto s = write_mode(i, mode); !s) {
        report(name + "/mode", name + ": " + s.error().message, now, errors);
        mode_failed = true;
      }
    }
    if (auto s = dataplane_.publish(i, set, static_cast<uint64_t>(now.count()), salt_); !s) {
      report(name + "/publish", name + ": " + s.error().message, now, errors);
    }
  }
  if (mode != mode_written_) {
    if (mode != mode_logged_) spdlog::info("data plane mode {}", names::name_of(d.mode));
    mode_logged_ = mode;
    // A failed write is tried again next tick, on every interface: writing
    // the mode an interface already has changes nothing.
    if (!mode_failed) mode_written_ = mode;
  }
}

TickReport Tick::run() {
  const auto now = clocks_.steady.now();
  const WallTime wall_now = clocks_.wall.now();
  TickReport report;
  changes_.expire(wall_now);
  law::TickInputs in = inputs(now, report.errors);

  report.decision = law_.tick(in);
  const law::Decision& d = report.decision;
  adaptive_limit_ = d.adaptive_limit;
  if (d.level_changed) {
    auto held = std::chrono::duration_cast<std::chrono::milliseconds>(now - level_since_);
    level_since_ = now;
    spdlog::info("level {} -> {} after {} ms: pressure {:.2f}, driven by {}; signals: {}",
                 names::name_of(d.previous_level), names::name_of(d.level), held.count(),
                 d.pressure, join(d.drivers), describe(in.signals));
  }
  write_dataplane(d, now, report.errors);
  if (settings_.reclaims) {
    if (auto s = reclaimer_.run(d, snapshot_.connections, now); !s) {
      this->report("reclaim", s.error().message, now, report.errors);
    }
  }

  std::vector<std::string> names;
  for (size_t i = 0; i < dataplane_.interface_count(); ++i) {
    names.push_back(dataplane_.interface_name(i));
  }
  const auto latency = latency_.snapshot();
  publisher_.publish({d, signals_.states(), snapshot_, latency ? &*latency : nullptr,
                      std::move(names), now, wall_now, level_since_});
  return report;
}

void Tick::admit_all() {
  for (size_t i = 0; i < dataplane_.interface_count(); ++i) {
    const std::string& name = dataplane_.interface_name(i);
    edgeshed_policy_set open{};
    open.generation = ++generation_;
    if (auto s =
            dataplane_.publish(i, open, static_cast<uint64_t>(clocks_.steady.now().count()), salt_);
        !s) {
      spdlog::error("{}: {}", name, s.error().message);
    } else {
      spdlog::info("{}: data plane left attached, admitting everything (on_exit = fail_open)",
                   name);
    }
  }
}

}  // namespace edgeshed::daemon
