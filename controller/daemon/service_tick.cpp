#include "daemon/service_tick.h"

#include <spdlog/spdlog.h>

#include "common/names.h"

namespace edgeshed::daemon {

void ServiceLog::publish(const TickOutcome& outcome) {
  const law::Decision& d = outcome.decision;
  // The limit moves every few ticks under load: its binding and opening
  // are the news, as are the level's changes.
  if (d.level == level_ && d.adaptive_limit_open == open_) return;
  spdlog::info("service {} ({}): level {}, limit {}", service_, name_, names::name_of(d.level),
               d.adaptive_limit_open ? std::string("open") : std::to_string(d.adaptive_limit));
  level_ = d.level;
  open_ = d.adaptive_limit_open;
}

Result<edgeshed_stats> ServiceView::read_stats(size_t i) const {
  auto sheds = dataplane_.read_service_sheds(i, service_);
  if (!sheds) return sheds.error();
  edgeshed_stats stats{};
  for (uint32_t c = 0; c < EDGESHED_NUM_CLASSES; ++c)
    stats.cls[c][EDGESHED_CTR_SHED_CAP] = (*sheds)[c];
  return stats;
}

law::ControlLawConfig service_law_config(const config::Config& cfg) {
  law::ControlLawConfig out = cfg.law_config();
  // With no signal every tick is "all stale": held, never failed open.
  out.all_stale = law::AllStalePolicy::kHold;
  return out;
}

namespace {
TickSettings service_settings(const config::Config& cfg) {
  TickSettings settings = TickSettings::from(cfg);
  settings.latency_signal.clear();  // its own latency, the kernel's
  settings.reclaims = false;        // service 0's tick reclaims
  settings.writes_mode = false;     // and writes the mode
  return settings;
}
}  // namespace

ServiceTick::ServiceTick(AttachedDataplane& dataplane, uint32_t service, const config::Config& cfg,
                         TickClocks clocks, RuntimeChangesKeeper& changes)
    : view(dataplane, service),
      law(service_law_config(cfg), clocks.steady),
      log(service, dataplane.service_name(service)),
      tick(view, clocks, law, changes, log, service_settings(cfg)) {
  tick.begin();
}

}  // namespace edgeshed::daemon
