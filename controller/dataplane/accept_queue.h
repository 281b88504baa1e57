// Runs the accept-queue iterator (bpf/accept_queue.bpf.c) over the data
// plane's port and socket-state maps, and sums its records per port.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/queue_snapshot.h"
#include "common/result.h"
#include "dataplane/listen_queues.h"

struct accept_queue_bpf;
struct bpf_link;

namespace edgeshed {

class AcceptQueueReader {
 public:
  // ports_fd and sk_state_fd are the data plane's es_ports and es_sk_state.
  static Result<AcceptQueueReader> open(int ports_fd, int sk_state_fd);
  static Result<AcceptQueueReader> open_pinned(const std::string& pin_dir);

  // The listeners' queues from sock_diag; only when one of a protected port
  // holds connections, a walk over the namespace's TCP sockets for their
  // sojourn. The walk visits every bucket of the established hash, which
  // costs most of the daemon's tick on an idle host (make bench-controller).
  // Both see the namespace of the calling thread: service_ns is its inode
  // when that is a container's (dataplane/in_netns.h), 0 when it is the
  // interface's, and only the ports whose entry names it are read.
  Result<QueueSnapshot> read(uint32_t service_ns = 0);

  // How many reads needed the walk.
  uint64_t walks() const { return walks_; }

 private:
  Result<QueueSnapshot> walk() const;
  // Whether port is protected, its service in the namespace service_ns.
  bool ours(uint16_t port, uint32_t service_ns) const;

  struct SkeletonDeleter {
    void operator()(accept_queue_bpf* s) const;
  };
  struct LinkDeleter {
    void operator()(bpf_link* l) const;
  };
  std::unique_ptr<accept_queue_bpf, SkeletonDeleter> skel_;
  std::unique_ptr<bpf_link, LinkDeleter> link_;
  int ports_fd_ = -1;     // the skeleton's es_ports, owned by skel_
  bool use_diag_ = true;  // false where sock_diag fails: every read walks
  ListenQueueDump diag_;  // the daemon's namespace's
  mutable uint64_t walks_ = 0;
};

}  // namespace edgeshed
