#include "signals/file_signal.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace edgeshed::signals {

Result<Sample> FileSignal::sample(std::chrono::nanoseconds now) {
  std::ifstream in(path_);
  if (!in) return make_error("cannot read " + path_ + ": " + std::strerror(errno));
  std::string text;
  std::getline(in, text);
  char* end = nullptr;
  errno = 0;
  double value = std::strtod(text.c_str(), &end);
  while (end && (*end == ' ' || *end == '\t' || *end == '\r')) ++end;
  if (text.empty() || end == text.c_str() || *end != '\0' || errno == ERANGE ||
      !std::isfinite(value)) {
    return make_error(path_ + ": expected one number, found '" + text + "'");
  }
  return Sample{value, now};
}

}  // namespace edgeshed::signals
