// Tells when the host's local routes may have changed (an address added or
// removed, a local route), so that the destination tries follow at once:
// a netlink socket in the route groups of both families.
#pragma once

#include "common/fd.h"
#include "common/result.h"

namespace edgeshed {

class LocalRouteWatch {
 public:
  static Result<LocalRouteWatch> open();

  // Readable when a route changed.
  int fd() const { return fd_.get(); }
  // Reads every pending notification; true when there was one (or the
  // socket overran, which may have hidden one).
  bool drain() const;

 private:
  explicit LocalRouteWatch(Fd fd) : fd_(std::move(fd)) {}
  Fd fd_;
};

}  // namespace edgeshed
