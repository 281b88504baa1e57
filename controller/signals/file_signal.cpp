#include "signals/file_signal.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "config/signal_table.h"
#include "config/toml_reader.h"

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

void parse_file_keys(config::TableReader& reader) {
  std::string path;
  reader.require("path");
  if (reader.string("path", path) && path.empty()) reader.invalid("path", "must not be empty");
}

MadeSource make_file(const config::SignalConfig& cfg, const DataplaneReaders& /*readers*/) {
  return std::unique_ptr<SignalSource>(
      std::make_unique<FileSignal>(config::signal_keys(cfg)["path"].value_or(std::string())));
}

}  // namespace

const SignalKindDescriptor kFileKind = {
    .meaning = "a number read from a file, for external tools and tests",
    .parse_keys = parse_file_keys,
    .check = checked_at_parse,
    .make = make_file,
};

}  // namespace edgeshed::signals
