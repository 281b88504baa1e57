// Rates per second and per class, from two readings of an interface's
// counters.
#pragma once

#include "cli/interface_reading.h"

namespace edgeshed {

// Sets after.status.rates; nothing when either reading is unreadable or
// they are not in time order.
void add_rates(InterfaceReading& after, const InterfaceReading& before);

}  // namespace edgeshed
