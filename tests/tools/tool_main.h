// The main() of a test tool (refserver, loadgen).
#pragma once

#include <cstdio>
#include <exception>

namespace edgeshed::tools {

// Runs the tool. An exception that escapes is a bug, but it should still say
// what it was, not only abort.
inline int guarded_main(const char* tool, int (*run_main)(int, char**), int argc, char** argv) {
  try {
    return run_main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", tool, e.what());
    return 1;
  }
}

}  // namespace edgeshed::tools
