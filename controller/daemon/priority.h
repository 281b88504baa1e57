// The daemon's scheduling priority. Shedding matters most when the host is
// starved of CPU; a tick that waits behind the service's threads lets the
// heartbeat lapse and the data plane fail open just then.
#pragma once

#include <string>

#include "common/result.h"

namespace edgeshed::daemon {

// Lowers the nice value of the calling thread (and so of every thread it
// starts afterwards) to `nice`; a process already at or below it is left
// alone. Returns the nice value now in force, or why it could not be raised.
Result<int> raise_priority(int nice);

}  // namespace edgeshed::daemon
