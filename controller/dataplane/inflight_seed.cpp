#include "dataplane/inflight_seed.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "dataplane/errno_message.h"
#include "edgeshed.skel.h"

namespace edgeshed {

Result<InflightSeed> InflightSeed::from_skeleton(const Skeleton& skel) {
  // A handle of our own: the skeleton is gone once attach returns.
  Fd prog(fcntl(bpf_program__fd(skel->progs.edgeshed_seed), F_DUPFD_CLOEXEC, 0));
  if (!prog.valid()) return make_error("cannot keep the in-flight seed walk: " + errno_text(errno));
  return InflightSeed(std::move(prog));
}

Status InflightSeed::run() const {
  Fd link(bpf_link_create(prog_.get(), 0, BPF_TRACE_ITER, nullptr));
  if (!link.valid()) {
    return make_error("cannot attach the in-flight seed walk (iter/tcp): " + errno_text(errno));
  }
  Fd walk(bpf_iter_create(link.get()));
  if (!walk.valid()) {
    return make_error("cannot start the in-flight seed walk: " + errno_text(errno));
  }
  // The walk counts as it goes and writes nothing: read until its end.
  char buf[64];
  for (;;) {
    const ssize_t n = ::read(walk.get(), buf, sizeof(buf));
    if (n == 0) return {};
    if (n < 0 && errno != EINTR) {
      return make_error("the in-flight seed walk failed: " + errno_text(errno));
    }
  }
}

}  // namespace edgeshed
