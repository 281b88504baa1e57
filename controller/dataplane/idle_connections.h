// The idle connections of the ports that reclaim them, and their reclaim
// (bpf/reclaim_idle.bpf.h): the daemon lists them, chooses the longest idle
// (law/idle_reclaim.h), and the kernel aborts those still idle.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "common/fd.h"
#include "common/result.h"
#include "dataplane/skeleton.h"
#include "edgeshed/abi.h"

namespace edgeshed {

struct IdleConnection {
  uint64_t cookie = 0;  // the socket's cookie
  std::chrono::nanoseconds idle{0};
  uint16_t port = 0;
  uint32_t group = 0;  // its service's class (abi.h, edgeshed_group())
};

class IdleConnections {
 public:
  // The two walks of a loaded data plane and its es_reclaim map; where the
  // kernel lacks them (bpf_sock_destroy, Linux 6.5; the request accounting,
  // 6.11), an instance that supports nothing.
  static Result<IdleConnections> from_skeleton(const Skeleton& skel);

  // A walk sees the TCP sockets of the namespace of the thread that starts
  // it: `everywhere` runs it in each namespace that holds protected ports
  // (here, and a container's on a thread inside it: dataplane/in_netns.h).
  using Walk = std::function<Status()>;
  using Everywhere = std::function<Status(const Walk&)>;
  static Status here(const Walk& walk) { return walk(); }

  bool supported() const { return list_prog_.valid(); }
  // One idle walk in each namespace.
  Result<std::vector<IdleConnection>> list(const Everywhere& everywhere = here) const;
  // One reclaim walk in each namespace: aborts each of cookies (at most
  // EDGESHED_RECLAIM_BATCH) that is still idle, in enforce mode, and counts
  // it in the class's reclaimed (or would_reclaim) counter. Cookies are
  // unique across namespaces: each walk aborts its own.
  Status reclaim(const std::vector<uint64_t>& cookies, const Everywhere& everywhere = here) const;

 private:
  IdleConnections(Fd list_prog, Fd reclaim_prog, Fd chosen)
      : list_prog_(std::move(list_prog)),
        reclaim_prog_(std::move(reclaim_prog)),
        chosen_(std::move(chosen)) {}
  Fd list_prog_, reclaim_prog_, chosen_;
};

}  // namespace edgeshed
