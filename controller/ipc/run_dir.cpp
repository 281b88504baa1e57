#include "ipc/run_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "common/fd.h"

namespace edgeshed::ipc {

Status remove_file(const std::string& path) {
  if (std::remove(path.c_str()) != 0 && errno != ENOENT) {
    return make_error(path + ": cannot remove: " + std::strerror(errno));
  }
  return {};
}

Status write_file_atomically(const std::string& path, const std::string& content, mode_t mode) {
  std::string tmp = path + ".tmp";
  Fd fd(open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode));
  if (!fd.valid()) return make_error("cannot write " + tmp + ": " + std::strerror(errno));
  fchmod(fd.get(), mode);  // whatever the umask
  for (size_t done = 0; done < content.size();) {
    ssize_t n = write(fd.get(), content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return make_error("cannot write " + tmp + ": " + std::strerror(errno));
    done += static_cast<size_t>(n);
  }
  fd.reset();
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return make_error("cannot rename " + tmp + ": " + std::strerror(errno));
  }
  return {};
}

Status make_run_dir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return make_error("cannot create " + dir + ": " + ec.message());
  // Readable by all: the protected service reads the level file. What is
  // private (socket, runtime changes, locks) has its own mode.
  chmod(dir.c_str(), 0755);
  return {};
}

}  // namespace edgeshed::ipc
