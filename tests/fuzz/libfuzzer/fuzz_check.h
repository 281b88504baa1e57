// A failed invariant in a fuzz target: print what broke and abort, which
// libFuzzer reports as a crash and saves the input for.
#pragma once

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string_view>

namespace edgeshed::fuzz {

[[noreturn]] inline void invariant_failed(const char* what, std::string_view detail,
                                          const char* file, int line) {
  std::fprintf(stderr, "%s:%d: invariant failed: %s\n  %.*s\n", file, line, what,
               static_cast<int>(detail.size()), detail.data());
  std::abort();
}

// A second parse of the same input, to check that a parse is a pure
// function of it, doubles a target's cost: one input in kPurityCheckEvery
// is checked, chosen by a hash of its bytes, so that a failing input fails
// again when replayed.
inline constexpr std::size_t kPurityCheckEvery = 4;

inline bool purity_checked(std::string_view input) {
  return std::hash<std::string_view>{}(input) % kPurityCheckEvery == 0;
}

}  // namespace edgeshed::fuzz

#define FUZZ_CHECK(cond, detail)                                                          \
  do {                                                                                    \
    if (!(cond)) ::edgeshed::fuzz::invariant_failed(#cond, (detail), __FILE__, __LINE__); \
  } while (0)
