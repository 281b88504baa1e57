#include "signals/file_signal.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "signals/dataplane_readers.h"
#include "signals/signal_params.h"

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

namespace {

// [[signal]] kind = "file": path = the file whose first line is the number.
MadeSource make_file(const config::SignalConfig& cfg, const DataplaneReaders& /*readers*/) {
  ParamReader p(cfg, {"path"});
  const auto path = p.string("path", /*required=*/true);
  if (path && path->empty()) p.invalid("path", "must not be empty");
  if (auto s = p.finish(); !s) return s.error();
  return std::unique_ptr<SignalSource>(std::make_unique<FileSignal>(*path));
}

}  // namespace

const SignalKindDescriptor kFileKind = {
    .meaning = "a number read from a file, for external tools and tests",
    .check = check_by_making<make_file>,
    .make = make_file,
};

}  // namespace edgeshed::signals
