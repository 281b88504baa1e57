#include "daemon/priority.h"

#include <sys/resource.h>

#include <cerrno>
#include <cstring>

namespace edgeshed::daemon {

Result<int> raise_priority(int nice) {
  // getpriority can return -1 as a value: errno tells an error apart.
  errno = 0;
  const int current = getpriority(PRIO_PROCESS, 0);
  if (current == -1 && errno != 0) {
    return make_error(std::string("getpriority: ") + std::strerror(errno));
  }
  if (current <= nice) return current;
  if (setpriority(PRIO_PROCESS, 0, nice) != 0) {
    const int err = errno;
    return make_error("cannot raise the scheduling priority from nice " + std::to_string(current) +
                      " to " + std::to_string(nice) + ": " + std::strerror(err) +
                      (err == EACCES || err == EPERM
                           ? " (needs CAP_SYS_NICE, or Nice= in the systemd unit)"
                           : ""));
  }
  return nice;
}

}  // namespace edgeshed::daemon
