#include "law/pressure.h"

#include <algorithm>
#include <cmath>

namespace edgeshed::law {

bool is_usable(const SignalReading& reading) {
  return !reading.stale && std::isfinite(reading.value) && std::isfinite(reading.target) &&
         reading.target > 0.0;
}

namespace {

// Running max that remembers every name reaching it.
struct MaxTracker {
  bool seen = false;
  double max = 0.0;
  std::vector<std::string> names;

  void add(double pressure, const std::string& name) {
    if (!seen || pressure > max) {
      seen = true;
      max = pressure;
      names.assign(1, name);
    } else if (pressure == max) {
      names.push_back(name);
    }
  }
};

}  // namespace

PressureSummary summarize_pressure(const std::vector<SignalReading>& readings) {
  MaxTracker all;
  MaxTracker hard_safety;
  for (const SignalReading& reading : readings) {
    if (!is_usable(reading)) continue;
    // A negative value (a counter that went backwards) is no pressure, not relief.
    const double pressure = std::max(0.0, reading.value / reading.target);
    all.add(pressure, reading.name);
    if (reading.hard_safety) hard_safety.add(pressure, reading.name);
  }
  PressureSummary summary;
  summary.all_stale = !all.seen;
  summary.pressure = all.max;
  summary.drivers = std::move(all.names);
  summary.hard_safety_pressure = hard_safety.max;
  summary.hard_safety_drivers = std::move(hard_safety.names);
  return summary;
}

}  // namespace edgeshed::law
