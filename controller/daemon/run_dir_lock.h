// The daemon's hold on its run directory (config: daemon.run_dir): one
// daemon per directory, held by a lock for the daemon's life, and the start
// history it leaves for `edgeshed status`. What the directory holds, and how
// its files are written, is ipc/run_dir.h: the CLI reads it too.
#pragma once

#include <string>

#include "common/fd.h"
#include "common/result.h"

namespace edgeshed::daemon {

class RunDirLock {
 public:
  // Creates dir if needed and takes its lock; a daemon already holding it
  // is an error that names it.
  static Result<RunDirLock> lock(const std::string& dir);

  const std::string& dir() const { return dir_; }
  std::string path(const char* name) const { return dir_ + "/" + name; }

  // The start history (start_history.h). Logged, not returned: a start is
  // not refused for a history it cannot write.
  void record_start() const;
  void record_start_failure(const std::string& error) const;
  // A clean stop: nothing left to diagnose.
  void forget_starts() const;

 private:
  RunDirLock(std::string dir, Fd lock) : dir_(std::move(dir)), lock_(std::move(lock)) {}

  std::string dir_;
  Fd lock_;
};

}  // namespace edgeshed::daemon
