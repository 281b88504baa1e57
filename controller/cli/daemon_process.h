// What /proc says of the daemon's pid, for the diagnosis in daemon_health.h.
#pragma once

namespace edgeshed {

// The pid belongs to an edgeshed (this very binary's name), not to a process
// that reused the pid of a daemon that died.
bool edgeshed_alive(int pid);
// The state letter of /proc/PID/stat ('R', 'S', 'T', ...); 0 if unknown.
char proc_state(int pid);

}  // namespace edgeshed
