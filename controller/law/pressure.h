// Combines the signal readings of one tick into the pressure the level
// machine acts on.
#pragma once

#include <string>
#include <vector>

namespace edgeshed::law {

// One signal as read this tick. Pressure is value / target, so 1.0 means the
// signal sits exactly at its target whatever its unit.
struct SignalReading {
  std::string name;
  double value = 0.0;
  double target = 1.0;
  // A hard-safety signal (e.g. memory PSI) sets a floor on the level that
  // neither other signals nor an operator pin can lower.
  bool hard_safety = false;
  // Not refreshed within its stale_after: its value says nothing about now.
  bool stale = false;
};

struct PressureSummary {
  // Max pressure over usable signals; 0 when none is usable.
  double pressure = 0.0;
  // Max pressure over usable hard-safety signals; 0 when there is none.
  double hard_safety_pressure = 0.0;
  // Names of the signals at the max pressure (ties all listed), for the log.
  std::vector<std::string> drivers;
  // Names of the hard-safety signals at hard_safety_pressure.
  std::vector<std::string> hard_safety_drivers;
  // No reading was usable: the caller applies its all-stale policy.
  bool all_stale = true;
};

// A reading is unusable when stale, or when its value or target cannot make a
// pressure (non-finite, or target <= 0): a broken signal must not escalate.
bool is_usable(const SignalReading& reading);

PressureSummary summarize_pressure(const std::vector<SignalReading>& readings);

}  // namespace edgeshed::law
