// A small text file read whole every tick, into a buffer that is reused:
// a kernel file of one record (/proc/pressure/*, /proc/net/netstat, a
// cgroup's *.pressure; not a file of many, such as /proc/net/tcp, whose
// reads may stop short of the end) or a regular file. A kernel file's fd
// stays open and each read starts at offset 0, where the kernel generates
// the text anew: one read instead of an open, reads and a close.
#pragma once

#include <string>
#include <string_view>

#include "common/fd.h"
#include "common/result.h"

namespace edgeshed::signals {

class ProcFile {
 public:
  // kEachRead: a file that may be replaced by a rename (an operator's), which
  // a held fd would never see.
  enum class Reopen { kNever, kEachRead };

  explicit ProcFile(std::string path, Reopen reopen = Reopen::kNever)
      : path_(std::move(path)), reopen_(reopen) {}

  // The file's whole text, valid until the next read. A failed read closes
  // the file, so the next one opens it again (a cgroup recreated).
  Result<std::string_view> read();
  const std::string& path() const { return path_; }
  // The errno of the last failed read.
  int failed_errno() const { return failed_errno_; }

 private:
  Result<std::string_view> fail();

  std::string path_;
  Reopen reopen_;
  int failed_errno_ = 0;
  Fd fd_;
  std::string text_;
};

}  // namespace edgeshed::signals
