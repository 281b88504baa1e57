#include "daemon/idle_reclaimer.h"

#include <algorithm>
#include <random>
#include <vector>

namespace edgeshed::daemon {

namespace {
std::function<double()> uniform_draws() {
  auto engine = std::make_shared<std::mt19937_64>(std::random_device{}());
  return [engine] { return std::uniform_real_distribution<double>(0.0, 1.0)(*engine); };
}
}  // namespace

IdleReclaimer::IdleReclaimer(DataplaneAccess& dataplane, law::IdleReclaimConfig config)
    : dataplane_(dataplane), reclaim_(config, uniform_draws()) {}

Status IdleReclaimer::run(const law::Decision& d, const ClassCounts& connections,
                          std::chrono::nanoseconds now) {
  if (d.mode == law::Mode::kOff || dataplane_.interface_count() == 0) return {};
  std::array<law::ClassConnections, law::kNumClasses> classes{};
  for (size_t c = 0; c < law::kNumClasses; ++c) {
    classes[c] = {static_cast<uint32_t>(std::min<uint64_t>(connections[c], UINT32_MAX)),
                  d.policies[c].inflight_cap};
  }
  const law::ClassQuota quota = reclaim_.due(now, d.level, classes);
  if (std::all_of(quota.begin(), quota.end(), [](uint32_t n) { return n == 0; })) return {};
  reclaim_.ran(now);
  // Every interface's tracker sees every connection of the namespace (see
  // Tick::read_dataplane): the first interface's walks reach them all.
  const std::string& name = dataplane_.interface_name(0);
  auto idle = dataplane_.idle_connections(0);
  if (!idle) return make_error(name + ": " + idle.error().message);
  std::vector<law::IdleCandidate> candidates;
  candidates.reserve(idle->size());
  for (const IdleConnection& c : *idle) {
    // Service 0's groups are the classes; the law caps no other service.
    if (c.group >= law::kNumClasses) continue;
    candidates.push_back({c.cookie, c.idle, static_cast<law::TrafficClass>(c.group)});
  }
  const std::vector<uint64_t> chosen = reclaim_.choose(std::move(candidates), quota);
  if (chosen.empty()) return {};
  if (auto s = dataplane_.reclaim(0, chosen); !s)
    return make_error(name + ": " + s.error().message);
  return {};
}

}  // namespace edgeshed::daemon
