// The TC ingress filter that refuses new requests on open connections
// (bpf/refuse_request.bpf.h). XDP reaches neither a socket's storage nor a
// second packet, so the filter sits at TC beside either hook, and only while
// a port of the interface refuses requests: every frame pays for its run.
#pragma once

#include <string>

#include "common/fd.h"
#include "common/result.h"
#include "dataplane/maps.h"

namespace edgeshed {

class RequestFilter {
 public:
  // prog_fd: the loaded edgeshed_refuse program (duplicated), or -1 where
  // the kernel counts no requests (before Linux 6.11): a request in service
  // would look like none, and the filter is refused.
  static Result<RequestFilter> create(const std::string& iface, int prog_fd);

  // Attaches (replacing the program of an earlier one) or removes the
  // filter. A clsact qdisc it creates is marked in the config map as
  // edgeshed's, for detach to remove.
  Status set(bool on, const Maps& maps) const;

 private:
  RequestFilter(std::string iface, Fd prog) : iface_(std::move(iface)), prog_(std::move(prog)) {}
  std::string iface_;
  Fd prog_;
};

// Removes the filter from the interface; what could not be removed, as
// " what: why;", or "".
std::string remove_request_filter(int ifindex);

}  // namespace edgeshed
