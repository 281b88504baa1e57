// A cgroup v2 folder of a test's own, removed when the test ends, and a
// way to make sockets inside it: the test process joins it for a moment and
// goes back where it was, so only the sockets made meanwhile (and those
// they accept) are the cgroup's.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

#include "common/cgroup2.h"
#include "common/fd.h"

namespace edgeshed::testing {

// The calling process's cgroup v2 folder, relative to the mount ("0::/x").
inline std::string own_cgroup2() {
  const std::string folder = process_cgroup2("/proc/self");
  return folder.empty() ? "/" : folder;
}

class TestCgroup {
 public:
  // An error message instead when cgroup v2 is missing or refuses a folder.
  static std::optional<TestCgroup> create(std::string* why) {
    const std::string mount = cgroup2_mount();
    if (mount.empty()) {
      *why = "no cgroup v2 mount";
      return std::nullopt;
    }
    static std::atomic<int> made{0};
    TestCgroup g;
    g.path_ = mount + "/edgeshed-test-" + std::to_string(getpid()) + "-" + std::to_string(made++);
    g.home_ = mount + own_cgroup2();
    if (mkdir(g.path_.c_str(), 0755) != 0) {
      *why = "cannot make " + g.path_;
      return std::nullopt;
    }
    g.dir_ = Fd(open(g.path_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    return g;
  }
  TestCgroup(TestCgroup&& o) noexcept
      : path_(std::exchange(o.path_, {})), home_(std::move(o.home_)), dir_(std::move(o.dir_)) {}
  TestCgroup& operator=(TestCgroup&& o) noexcept {
    std::swap(path_, o.path_);
    std::swap(home_, o.home_);
    std::swap(dir_, o.dir_);
    return *this;
  }
  ~TestCgroup() {
    if (!path_.empty()) rmdir(path_.c_str());
  }

  // Runs make() with the process inside the cgroup, and returns its result;
  // a process that cannot move in or back out aborts: its later sockets
  // would be in the wrong cgroup unnoticed.
  template <typename Make>
  auto inside(Make make) const {
    join(path_);
    auto made = make();
    join(home_);
    return made;
  }

  int fd() const { return dir_.get(); }
  const std::string& path() const { return path_; }

 private:
  TestCgroup() = default;
  static void join(const std::string& dir) {
    std::ofstream procs(dir + "/cgroup.procs");
    procs << getpid() << "\n";
    procs.flush();
    if (!procs) {
      std::fprintf(stderr, "cannot move the test process into %s\n", dir.c_str());
      std::abort();
    }
  }

  std::string path_, home_;
  Fd dir_;
};

}  // namespace edgeshed::testing
