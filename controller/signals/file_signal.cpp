#include "signals/file_signal.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace edgeshed::signals {

Result<Sample> FileSignal::sample(std::chrono::nanoseconds now) {
  auto read = file_.read();
  if (!read) return read.error();
  const std::string text(read->substr(0, read->find('\n')));
  char* end = nullptr;
  errno = 0;
  double value = std::strtod(text.c_str(), &end);
  while (*end == ' ' || *end == '\t' || *end == '\r') ++end;
  if (text.empty() || end == text.c_str() || *end != '\0' || errno == ERANGE ||
      !std::isfinite(value)) {
    return make_error(file_.path() + ": expected one number, found '" + text + "'");
  }
  return Sample{value, now};
}

}  // namespace edgeshed::signals
