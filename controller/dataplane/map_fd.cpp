#include "dataplane/map_fd.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>

#include <cerrno>

#include "dataplane/errno_message.h"

namespace edgeshed {

Result<Fd> dup_map_fd(const bpf_map* map) {
  int fd = fcntl(bpf_map__fd(map), F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return make_error(std::string("cannot dup map fd: ") + errno_text(errno));
  return Fd(fd);
}

Result<Fd> open_pin(const std::string& dir, const char* name) {
  std::string path = dir + "/" + name;
  int fd = bpf_obj_get(path.c_str());
  if (fd < 0) return make_error("cannot open pinned map " + path + ": " + errno_text(errno));
  return Fd(fd);
}

}  // namespace edgeshed
