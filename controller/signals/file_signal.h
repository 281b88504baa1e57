// A number read from a file each tick. This is how an operator or a test
// injects a synthetic signal, and how any tool can feed edgeshed without
// code: write the value to a temporary file and rename it over the path.
#pragma once

#include <string>

#include "signals/proc_file.h"
#include "signals/signal_kind.h"
#include "signals/signal_source.h"

namespace edgeshed::signals {

class FileSignal final : public SignalSource {
 public:
  explicit FileSignal(std::string path) : file_(std::move(path), ProcFile::Reopen::kEachRead) {}
  Result<Sample> sample(std::chrono::nanoseconds now) override;

 private:
  ProcFile file_;
};

// [[signal]] kind = "file": path = the file holding one number. Required,
// not empty, checked with the config file; no other key.
extern const SignalKindDescriptor kFileKind;

}  // namespace edgeshed::signals
