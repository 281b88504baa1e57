// Runs the accept-queue iterator (bpf/accept_queue.bpf.c) over the data
// plane's port and socket-state maps, and sums its records per port.
#pragma once

#include <memory>
#include <string>

#include "common/result.h"
#include "signals/accept_queue_signal.h"

struct accept_queue_bpf;
struct bpf_link;

namespace edgeshed {

class AcceptQueueReader {
 public:
  // ports_fd and sk_state_fd are the data plane's es_ports and es_sk_state.
  static Result<AcceptQueueReader> open(int ports_fd, int sk_state_fd);
  static Result<AcceptQueueReader> open_pinned(const std::string& pin_dir);

  // One walk over the host's TCP sockets: its cost grows with their number
  // (make bench-controller measures the daemon with it).
  Result<signals::QueueSnapshot> read() const;

 private:
  struct SkeletonDeleter {
    void operator()(accept_queue_bpf* s) const;
  };
  struct LinkDeleter {
    void operator()(bpf_link* l) const;
  };
  std::unique_ptr<accept_queue_bpf, SkeletonDeleter> skel_;
  std::unique_ptr<bpf_link, LinkDeleter> link_;
};

}  // namespace edgeshed
