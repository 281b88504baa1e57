#include "signals/proc_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace edgeshed::signals {
namespace {

constexpr size_t kFirstRead = 4096;

}  // namespace

Result<std::string_view> ProcFile::fail() {
  failed_errno_ = errno;
  fd_.reset();
  return make_error("cannot read " + path_ + ": " + std::strerror(failed_errno_));
}

Result<std::string_view> ProcFile::read() {
  if (!fd_.valid()) {
    fd_.reset(::open(path_.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd_.valid()) return fail();
  }
  if (text_.size() < kFirstRead) text_.resize(kFirstRead);
  size_t used = 0;
  for (;;) {
    const size_t room = text_.size() - used;
    const ssize_t n = ::pread(fd_.get(), text_.data() + used, room, static_cast<off_t>(used));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail();
    used += static_cast<size_t>(n);
    // Each of these files is one record, shown whole: a read that leaves
    // room is its end, as it is for a regular file.
    if (static_cast<size_t>(n) < room) break;
    text_.resize(text_.size() * 2);
  }
  if (reopen_ == Reopen::kEachRead) fd_.reset();
  return std::string_view(text_.data(), used);
}

}  // namespace edgeshed::signals
