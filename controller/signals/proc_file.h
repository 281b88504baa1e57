// A kernel text file (/proc/pressure/*, /proc/net/netstat, a cgroup's
// *.pressure) read whole every tick. Its fd stays open and each read starts
// at offset 0, where the kernel generates the text anew: one read instead of
// an open, a read and a close, into a buffer that is reused.
#pragma once

#include <string>
#include <string_view>

#include "common/fd.h"
#include "common/result.h"

namespace edgeshed::signals {

class ProcFile {
 public:
  explicit ProcFile(std::string path) : path_(std::move(path)) {}

  // The file's whole text, valid until the next read. A failed read closes
  // the file, so the next one opens it again (a cgroup recreated).
  Result<std::string_view> read();
  const std::string& path() const { return path_; }
  // The errno of the last failed read.
  int failed_errno() const { return failed_errno_; }

 private:
  Result<std::string_view> fail();

  std::string path_;
  int failed_errno_ = 0;
  Fd fd_;
  std::string text_;
};

}  // namespace edgeshed::signals
