#include "dataplane/in_netns.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cerrno>
#include <system_error>
#include <thread>

#include "common/fd.h"
#include "dataplane/errno_message.h"

namespace edgeshed {

Result<uint64_t> current_netns_cookie() {
  Fd s(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!s.valid()) return make_error("cannot make a socket: " + errno_text(errno));
  uint64_t cookie = 0;
  socklen_t len = sizeof(cookie);
  if (::getsockopt(s.get(), SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &len) != 0) {
    return make_error("cannot read the namespace's cookie: " + errno_text(errno));
  }
  return cookie;
}

Status run_in_netns(const std::string& ns_file, uint32_t inode,
                    const std::function<Status()>& work) {
  Fd ns(::open(ns_file.c_str(), O_RDONLY | O_CLOEXEC));
  if (!ns.valid()) return make_error("cannot open " + ns_file + ": " + errno_text(errno));
  struct stat st {};
  if (::fstat(ns.get(), &st) != 0) return make_error(ns_file + ": " + errno_text(errno));
  if (st.st_ino != inode) {
    return make_error(ns_file + " opens net:[" + std::to_string(st.st_ino) + "] now, not net:[" +
                      std::to_string(inode) + "]");
  }
  Status result;
  try {
    std::thread worker([&] {
      if (::setns(ns.get(), CLONE_NEWNET) != 0) {
        result =
            make_error("cannot enter the network namespace " + ns_file + ": " + errno_text(errno));
        return;
      }
      result = work();
    });
    worker.join();
  } catch (const std::system_error& e) {
    return make_error("cannot start a thread to work in " + ns_file + ": " + e.what());
  }
  return result;
}

}  // namespace edgeshed
