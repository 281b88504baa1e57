#include "daemon/run_dir_lock.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>

#include <cerrno>
#include <cstring>

#include "ipc/run_dir.h"
#include "ipc/start_history.h"

namespace edgeshed::daemon {

Result<RunDirLock> RunDirLock::lock(const std::string& dir) {
  if (auto s = ipc::make_run_dir(dir); !s) return s.error();
  const std::string path = dir + "/daemon.lock";
  Fd fd(open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (!fd.valid()) return make_error("cannot open " + path + ": " + std::strerror(errno));
  if (flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    return make_error("another edgeshed daemon is running with run directory " + dir +
                      " (it holds " + path + "); stop it first, `edgeshed status` shows it");
  }
  return RunDirLock(dir, std::move(fd));
}

void RunDirLock::record_start() const {
  if (auto s = ipc::record_start(dir_); !s) spdlog::warn("{}", s.error().message);
}

void RunDirLock::record_start_failure(const std::string& error) const {
  (void)ipc::record_start_failure(dir_, error);
}

void RunDirLock::forget_starts() const {
  if (auto s = ipc::forget_start_history(dir_); !s) spdlog::warn("{}", s.error().message);
}

}  // namespace edgeshed::daemon
