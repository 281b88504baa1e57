// A failed invariant in a fuzz target: print what broke and abort, which
// libFuzzer reports as a crash and saves the input for.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace edgeshed::fuzz {

[[noreturn]] inline void invariant_failed(const char* what, std::string_view detail,
                                          const char* file, int line) {
  std::fprintf(stderr, "%s:%d: invariant failed: %s\n  %.*s\n", file, line, what,
               static_cast<int>(detail.size()), detail.data());
  std::abort();
}

}  // namespace edgeshed::fuzz

#define FUZZ_CHECK(cond, detail)                                                          \
  do {                                                                                    \
    if (!(cond)) ::edgeshed::fuzz::invariant_failed(#cond, (detail), __FILE__, __LINE__); \
  } while (0)
