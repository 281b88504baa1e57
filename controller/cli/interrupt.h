// Ctrl-C and SIGTERM for the long-running CLI views (top, events): they set
// a flag and interrupt blocking calls, so the view ends cleanly.
#pragma once

namespace edgeshed {

void catch_interrupts();
bool interrupted();

}  // namespace edgeshed
