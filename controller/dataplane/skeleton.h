// RAII owner of the data plane's libbpf skeleton.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/result.h"
#include "edgeshed/abi.h"

struct edgeshed_bpf;
struct bpf_program;

namespace edgeshed {

struct SkeletonDeleter {
  void operator()(edgeshed_bpf* skel) const;
};

class Skeleton {
 public:
  // Opens and loads the programs. With a pin directory, every map is reused
  // from its pin there when one exists (adoption keeps counters and state)
  // and pinned there otherwise; the host's limits (is_host_map()) are
  // pinned beside it, in the directory EDGESHED_HOST_PIN_DIR, which must
  // exist, so that every interface attached shares them.
  // The response timer's programs are left out on a kernel without their
  // tracepoints (see measures_response()). framing (enum edgeshed_framing)
  // is how the attached device's frames start. xdp_ifindex: the device
  // whose native XDP will run the program, which is then bound to it where
  // the kernel lets it ask the driver for a stripped VLAN tag (Linux 6.8)
  // and the driver has native XDP; 0 for any other hook.
  static Result<Skeleton> load(const std::string& pin_dir = "",
                               uint32_t framing = EDGESHED_FRAMING_ETHERNET, int xdp_ifindex = 0);

  // The XDP program loaded: edgeshed_xdp_dev when bound to the device,
  // else edgeshed_xdp.
  const bpf_program* xdp_program() const;

  // Whether the response-time programs are loaded (Linux 6.11 and later).
  bool measures_response() const;
  // Whether the idle walks are loaded (those, and bpf_sock_destroy()).
  bool reclaims_idle() const;

  // A map of the host's limits, shared by every interface.
  static bool is_host_map(std::string_view name);

  edgeshed_bpf* get() const { return skel_.get(); }
  edgeshed_bpf* operator->() const { return skel_.get(); }

 private:
  explicit Skeleton(edgeshed_bpf* skel) : skel_(skel) {}
  // xdp_ifindex: bind the XDP program to that device, or 0.
  static Result<Skeleton> load_once(const std::string& pin_dir, uint32_t framing, int xdp_ifindex);
  std::unique_ptr<edgeshed_bpf, SkeletonDeleter> skel_;
};

}  // namespace edgeshed
