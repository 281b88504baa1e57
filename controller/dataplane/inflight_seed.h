// Counts in-flight the connections the tracker never saw open: those
// established before it was attached, or before their port was protected.
#pragma once

#include <utility>

#include "common/fd.h"
#include "common/result.h"
#include "dataplane/skeleton.h"

namespace edgeshed {

class InflightSeed {
 public:
  // The seed walk (iter/tcp edgeshed_seed in bpf/edgeshed.bpf.c) of a
  // loaded data plane, which shares its maps.
  static Result<InflightSeed> from_skeleton(const Skeleton& skel);

  // One walk over this network namespace's TCP sockets. Run after the
  // tracker is attached and whenever the protected ports change: a
  // connection already counted is skipped, so a second run counts nothing.
  Status run() const;

 private:
  explicit InflightSeed(Fd prog) : prog_(std::move(prog)) {}
  Fd prog_;
};

}  // namespace edgeshed
