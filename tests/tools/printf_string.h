// printf into a std::string as long as the output needs: no fixed buffer
// that a long error text or a huge number could silently cut short.
#pragma once

#include <cstdarg>
#include <cstdio>
#include <string>

namespace edgeshed::tools {

// NOLINTNEXTLINE(cert-dcl50-cpp): C variadic, so that the compiler checks each call's format
[[gnu::format(printf, 1, 2)]] inline std::string printf_string(const char* format, ...) {
  va_list args;
  va_start(args, format);
  va_list again;
  va_copy(again, args);
  const int n = std::vsnprintf(nullptr, 0, format, args);
  va_end(args);
  std::string out(n > 0 ? static_cast<size_t>(n) : 0, '\0');
  // n characters and the NUL, for which a std::string always has room.
  if (n > 0) (void)std::vsnprintf(out.data(), out.size() + 1, format, again);
  va_end(again);
  return out;
}

}  // namespace edgeshed::tools
