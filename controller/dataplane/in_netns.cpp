#include "dataplane/in_netns.h"

#include <fcntl.h>
#include <sched.h>

#include <cerrno>
#include <thread>

#include "common/fd.h"
#include "dataplane/errno_message.h"

namespace edgeshed {

Status run_in_netns(const std::string& ns_file, const std::function<Status()>& work) {
  // Opened here, not on the thread: a namespace gone by now is the caller's error.
  Fd ns(::open(ns_file.c_str(), O_RDONLY | O_CLOEXEC));
  if (!ns.valid()) return make_error("cannot open " + ns_file + ": " + errno_text(errno));
  Status result;
  std::thread worker([&] {
    if (::setns(ns.get(), CLONE_NEWNET) != 0) {
      result =
          make_error("cannot enter the network namespace " + ns_file + ": " + errno_text(errno));
      return;
    }
    result = work();
  });
  worker.join();
  return result;
}

}  // namespace edgeshed
