// What the daemon exports to Prometheus, and its text exposition format.
// The tick thread fills a snapshot; the HTTP thread renders it on a scrape,
// so nothing is formatted when nobody scrapes.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "edgeshed/abi.h"
#include "law/control_law.h"

namespace edgeshed::daemon {

// Prometheus histogram of tick durations, in seconds.
class TickHistogram {
 public:
  static constexpr std::array<double, 11> kBounds = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                                     0.01,   0.025,   0.05,   0.1,   0.25};
  void observe(double seconds);
  // Cumulative count of observations <= kBounds[i].
  uint64_t bucket(size_t i) const { return buckets_[i]; }
  uint64_t count() const { return count_; }
  double sum() const { return sum_; }

 private:
  std::array<uint64_t, kBounds.size()> buckets_{};
  uint64_t count_ = 0;
  double sum_ = 0;
};

struct SignalMetric {
  std::string name;
  std::string kind;
  std::optional<double> value;  // none before the first sample
  double target = 1.0;
  bool stale = true;
  std::optional<double> age_seconds;
};

// A port whose service runs in a network namespace of its own (a
// container's): whether that namespace is found now.
struct PortNamespaceMetric {
  uint16_t port = 0;
  std::string netns;  // as the config names it: "pid 4242"
  bool found = false;
};

struct InterfaceMetric {
  std::string iface;
  edgeshed_stats stats{};
};

struct MetricsSnapshot {
  law::Level level = law::Level::kNormal;
  double pressure = 0;
  bool level_pinned = false;
  law::Mode mode = law::Mode::kObserve;
  bool fail_open = false;
  uint32_t adaptive_limit = 0;
  bool adaptive_limit_open = false;
  std::array<law::ClassPolicy, law::kNumClasses> policies{};
  std::array<uint64_t, law::kNumClasses> inflight{};         // requests in service
  std::array<uint64_t, law::kNumClasses> inflight_age_ns{};  // the sum of their ages
  std::array<uint64_t, law::kNumClasses> connections{};
  std::vector<SignalMetric> signals;
  std::vector<InterfaceMetric> interfaces;
  std::vector<PortNamespaceMetric> port_namespaces;
  uint64_t level_changes = 0;
  uint64_t reloads_ok = 0;
  uint64_t reloads_failed = 0;
  TickHistogram ticks;
  // How the listeners answer, from the running config: a reload takes
  // effect with the next tick's snapshot.
  law::Level not_ready_from = law::Level::kCritical;  // GET /ready's 503 from here up
  config::AgentReplyConfig agent_reply;
};

std::string render_metrics(const MetricsSnapshot& s);

}  // namespace edgeshed::daemon
