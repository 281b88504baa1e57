#include "dataplane/skeleton.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include <algorithm>
#include <filesystem>
#include <iterator>

#include "common/fd.h"
#include "dataplane/errno_message.h"
#include "edgeshed.skel.h"
#include "edgeshed/abi.h"

namespace edgeshed {

void SkeletonDeleter::operator()(edgeshed_bpf* skel) const { edgeshed_bpf__destroy(skel); }

namespace {

// Whether the running kernel has a tracepoint (its btf_trace_ typedef).
bool kernel_has_tracepoint(const btf* vmlinux, const char* name) {
  const std::string type = std::string("btf_trace_") + name;
  return vmlinux && btf__find_by_name_kind(vmlinux, type.c_str(), BTF_KIND_TYPEDEF) >= 0;
}

void drop_reclaim(edgeshed_bpf* skel) {
  bpf_program__set_autoload(skel->progs.edgeshed_idle, false);
  bpf_program__set_autoload(skel->progs.edgeshed_reclaim, false);
}

// The response timer needs sk_data_ready (Linux 6.6) and tcp_sendmsg_locked
// (6.11). On an older kernel both halves are left out, so that the data
// plane still loads: no response time, everything else as before.
void drop_unsupported_latency(edgeshed_bpf* skel) {
  btf* vmlinux = btf__load_vmlinux_btf();
  const bool supported = kernel_has_tracepoint(vmlinux, "sk_data_ready") &&
                         kernel_has_tracepoint(vmlinux, "tcp_sendmsg_locked");
  // The idle walks abort with bpf_sock_destroy() (Linux 6.5).
  const bool destroys =
      vmlinux && btf__find_by_name_kind(vmlinux, "bpf_sock_destroy", BTF_KIND_FUNC) >= 0;
  btf__free(vmlinux);
  if (!destroys) drop_reclaim(skel);
  if (supported) return;
  bpf_program__set_autoload(skel->progs.edgeshed_request, false);
  bpf_program__set_autoload(skel->progs.edgeshed_response, false);
  bpf_program__set_autoload(skel->progs.edgeshed_request_cg, false);
  bpf_program__set_autoload(skel->progs.edgeshed_response_cg, false);
  // Without the request stamp every segment would look like a new request,
  // and a request read and unanswered like an idle connection.
  bpf_program__set_autoload(skel->progs.edgeshed_refuse, false);
  drop_reclaim(skel);
}

// linux/bpf.h's BPF_F_XDP_DEV_BOUND_ONLY (Linux 6.3), newer than the
// headers some distributions build with.
constexpr uint32_t kXdpDevBoundOnly = 1U << 6;

// The class rates (GCRA due times), the RST ceiling and the reflection
// limit: per host, so that attaching a second interface does not double
// them.
constexpr std::string_view kHostMaps[] = {"es_buckets", "es_rst_budget", "es_rst_reflect",
                                          "es_rst_reflect_new"};

// bpf_xdp_metadata_rx_vlan_tag() (Linux 6.8): the driver's word on the VLAN
// tag it stripped, for a program bound to its device.
bool kernel_reads_rx_vlan_tag() {
  btf* vmlinux = btf__load_vmlinux_btf();
  const bool found = vmlinux && btf__find_by_name_kind(vmlinux, "bpf_xdp_metadata_rx_vlan_tag",
                                                       BTF_KIND_FUNC) >= 0;
  btf__free(vmlinux);
  return found;
}

// Whether the device takes an XDP program bound to it (its driver has
// native XDP): a two-instruction XDP_PASS program, loaded bound and closed.
bool device_binds_xdp(int ifindex) {
  // {code, dst_reg, src_reg, off, imm}: r0 = XDP_PASS; exit.
  const bpf_insn pass[] = {
      {BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, XDP_PASS},
      {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
  };
  bpf_prog_load_opts opts{};
  opts.sz = sizeof(opts);
  opts.prog_ifindex = static_cast<uint32_t>(ifindex);
  opts.prog_flags = kXdpDevBoundOnly;
  const Fd probe(
      bpf_prog_load(BPF_PROG_TYPE_XDP, "es_bind_probe", "GPL", pass, std::size(pass), &opts));
  return probe.valid();
}

}  // namespace

bool Skeleton::is_host_map(std::string_view name) {
  return std::find(std::begin(kHostMaps), std::end(kHostMaps), name) != std::end(kHostMaps);
}

Result<Skeleton> Skeleton::load(const std::string& pin_dir, uint32_t framing, int xdp_ifindex) {
  // A device without native XDP takes no program bound to it; the attach
  // that follows says it has none.
  const bool bind = xdp_ifindex != 0 && kernel_reads_rx_vlan_tag() && device_binds_xdp(xdp_ifindex);
  return load_once(pin_dir, framing, bind ? xdp_ifindex : 0);
}

Result<Skeleton> Skeleton::load_once(const std::string& pin_dir, uint32_t framing,
                                     int xdp_ifindex) {
  Skeleton skel(edgeshed_bpf__open());
  if (!skel.get()) {
    return make_error("cannot open the BPF object: " + errno_text(errno));
  }
  skel->rodata->es_framing = framing;
  // One of the two XDP programs: the one bound to the device, or the other.
  if (xdp_ifindex != 0) {
    bpf_program__set_ifindex(skel->progs.edgeshed_xdp_dev, xdp_ifindex);
    bpf_program__set_flags(skel->progs.edgeshed_xdp_dev,
                           bpf_program__flags(skel->progs.edgeshed_xdp_dev) | kXdpDevBoundOnly);
    bpf_program__set_autoload(skel->progs.edgeshed_xdp, false);
  } else {
    bpf_program__set_autoload(skel->progs.edgeshed_xdp_dev, false);
  }
  if (!pin_dir.empty()) {
    const std::string host_dir =
        (std::filesystem::path(pin_dir).parent_path() / EDGESHED_HOST_PIN_DIR).string();
    bpf_map* map;
    bpf_object__for_each_map(map, skel->obj) {
      // The load's constants (.rodata) belong to this load, not to the pins.
      if (bpf_map__is_internal(map)) continue;
      const char* name = bpf_map__name(map);
      std::string path = (is_host_map(name) ? host_dir : pin_dir) + "/" + name;
      if (int err = bpf_map__set_pin_path(map, path.c_str()); err) {
        return make_error("cannot set pin path " + path + ": " + errno_text(err));
      }
    }
  }
  drop_unsupported_latency(skel.get());
  if (int err = edgeshed_bpf__load(skel.get()); err) {
    std::string hint =
        err == -EPERM ? " (root, or CAP_BPF, CAP_NET_ADMIN and CAP_PERFMON, are needed)" : "";
    if (!pin_dir.empty() && err == -EINVAL) {
      hint = " (maps pinned in " + pin_dir + " do not match this build; run `edgeshed detach`)";
    }
    return make_error("cannot load the BPF programs: " + errno_text(err) + hint);
  }
  return skel;
}

const bpf_program* Skeleton::xdp_program() const {
  return bpf_program__autoload(skel_->progs.edgeshed_xdp_dev) ? skel_->progs.edgeshed_xdp_dev
                                                              : skel_->progs.edgeshed_xdp;
}

bool Skeleton::reclaims_idle() const {
  return bpf_program__autoload(skel_->progs.edgeshed_idle) &&
         bpf_program__autoload(skel_->progs.edgeshed_reclaim);
}

bool Skeleton::measures_response() const {
  return bpf_program__autoload(skel_->progs.edgeshed_request) &&
         bpf_program__autoload(skel_->progs.edgeshed_response);
}

}  // namespace edgeshed
