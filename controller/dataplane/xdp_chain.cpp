#include "dataplane/xdp_chain.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include <unistd.h>

#include <cerrno>

#include "common/fd.h"
#include "common/names.h"
#include "dataplane/errno_message.h"
#include "edgeshed/abi.h"

namespace edgeshed {
namespace {

constexpr const char* kSlotPin = "es_xdp_next";

uint32_t mode_flag(uint32_t hook) {
  return hook == EDGESHED_HOOK_XDP ? XDP_FLAGS_DRV_MODE : XDP_FLAGS_SKB_MODE;
}

std::string prog_name(int fd) {
  bpf_prog_info info{};
  uint32_t len = sizeof(info);
  if (bpf_obj_get_info_by_fd(fd, &info, &len) != 0) return "?";
  return info.name;
}

uint32_t prog_id(int fd) {
  bpf_prog_info info{};
  uint32_t len = sizeof(info);
  return bpf_obj_get_info_by_fd(fd, &info, &len) == 0 ? info.id : 0;
}

// Pins fd at dir/name through a fresh name, so the old pin stays until the
// new one holds.
Status repin(int fd, const std::string& dir, const char* name) {
  const std::string pin = dir + "/" + name;
  const std::string fresh = pin + "_new";
  unlink(fresh.c_str());
  if (bpf_obj_pin(fd, fresh.c_str()) != 0) {
    return make_error("cannot pin " + fresh + ": " + errno_text(errno));
  }
  if (rename(fresh.c_str(), pin.c_str()) != 0) {
    return make_error("cannot rename " + fresh + ": " + errno_text(errno));
  }
  return {};
}

// Puts incoming on the hook in outgoing's place; the kernel refuses (EEXIST)
// when outgoing is no longer the one there.
int swap_prog(int ifindex, uint32_t mode, int incoming, int outgoing) {
  bpf_xdp_attach_opts o{};
  o.sz = sizeof(o);
  o.old_prog_fd = outgoing;
  return bpf_xdp_attach(ifindex, incoming, mode | XDP_FLAGS_REPLACE, &o);
}

std::string swap_hint(int err) {
  if (err == -EBUSY || err == EBUSY) {
    return " (the program is held by a bpf_link; edgeshed can only take the place of a program "
           "attached by netlink, as xdp-tools' programs are where the dispatcher is refused)";
  }
  if (err == -EEXIST || err == EEXIST) return " (the program on the interface changed meanwhile)";
  return "";
}

}  // namespace

Result<std::optional<XdpNeighbour>> xdp_neighbour(int ifindex, uint32_t hook,
                                                  const std::string& iface) {
  bpf_xdp_query_opts q{};
  q.sz = sizeof(q);
  if (bpf_xdp_query(ifindex, 0, &q) != 0) return std::optional<XdpNeighbour>{};  // attach says
  const uint32_t same = hook == EDGESHED_HOOK_XDP ? q.drv_prog_id : q.skb_prog_id;
  const uint32_t other = hook == EDGESHED_HOOK_XDP ? q.skb_prog_id : q.drv_prog_id;
  if (other != 0 || q.hw_prog_id != 0) {
    // The hook of the neighbour's mode, where edgeshed would chain beside it.
    const std::string_view its_hook =
        names::kHooks[hook == EDGESHED_HOOK_XDP ? EDGESHED_HOOK_XDP_GENERIC : EDGESHED_HOOK_XDP];
    return make_error("another XDP program (id " + std::to_string(other ? other : q.hw_prog_id) +
                      ") is attached to " + iface + " in " +
                      (other ? (hook == EDGESHED_HOOK_XDP ? "generic" : "native") : "offload") +
                      " mode; the kernel runs one mode at a time: attach with --hook " +
                      std::string(its_hook) + " to run beside it");
  }
  if (same == 0) return std::optional<XdpNeighbour>{};
  Fd fd(bpf_prog_get_fd_by_id(same));
  if (!fd.valid()) {
    return make_error("cannot open the XDP program (id " + std::to_string(same) + ") on " + iface +
                      ": " + errno_text(errno));
  }
  return std::optional<XdpNeighbour>(XdpNeighbour{same, prog_name(fd.get())});
}

bool xdp_chained(const std::string& dir) {
  return access((dir + "/" + kXdpProgPin).c_str(), F_OK) == 0;
}

Status chain_xdp(int ifindex, uint32_t hook, int prog_fd, int slot_fd,
                 const XdpNeighbour& neighbour, const std::string& dir) {
  const std::string what =
      "program id " + std::to_string(neighbour.id) + " (" + neighbour.name + ")";
  Fd next(bpf_prog_get_fd_by_id(neighbour.id));
  if (!next.valid()) return make_error("cannot open " + what + ": " + errno_text(errno));
  const uint32_t zero = 0;
  const int next_fd = next.get();
  if (bpf_map_update_elem(slot_fd, &zero, &next_fd, BPF_ANY) != 0) {
    const int err = errno;
    return make_error("cannot put " + what + " behind edgeshed: " + errno_text(err) +
                      (err == EINVAL
                           ? " (the kernel will not tail-call it from edgeshed's "
                             "program: another type, expected attach type or frags support)"
                           : ""));
  }
  if (int err = swap_prog(ifindex, mode_flag(hook), prog_fd, next_fd); err != 0) {
    bpf_map_delete_elem(slot_fd, &zero);
    return make_error("cannot take the place of " + what + ": " + errno_text(err) + swap_hint(err));
  }
  if (auto s = repin(prog_fd, dir, kXdpProgPin); !s) {
    (void)swap_prog(ifindex, mode_flag(hook), next_fd, prog_fd);  // give it back
    return s;
  }
  return {};
}

Status rechain_xdp(int ifindex, int prog_fd, const std::string& dir) {
  const std::string pin = dir + "/" + kXdpProgPin;
  Fd old(bpf_obj_get(pin.c_str()));
  if (!old.valid()) return make_error("cannot open " + pin + ": " + errno_text(errno));
  bpf_xdp_query_opts q{};
  q.sz = sizeof(q);
  const uint32_t old_id = prog_id(old.get());
  if (bpf_xdp_query(ifindex, 0, &q) != 0 || old_id == 0 ||
      (q.drv_prog_id != old_id && q.skb_prog_id != old_id)) {
    return make_error("edgeshed's chained XDP program (" + pin +
                      ") is no longer on the interface; run `edgeshed detach` first");
  }
  const uint32_t mode = q.drv_prog_id == old_id ? XDP_FLAGS_DRV_MODE : XDP_FLAGS_SKB_MODE;
  if (int err = swap_prog(ifindex, mode, prog_fd, old.get()); err != 0) {
    return make_error("cannot replace the chained XDP program: " + errno_text(err) +
                      swap_hint(err));
  }
  return repin(prog_fd, dir, kXdpProgPin);
}

std::string unchain_xdp(int ifindex, const std::string& dir) {
  const std::string pin = dir + "/" + kXdpProgPin;
  Fd ours(bpf_obj_get(pin.c_str()));
  if (!ours.valid()) return " " + pin + ": " + errno_text(errno) + ";";
  bpf_xdp_query_opts q{};
  q.sz = sizeof(q);
  const uint32_t our_id = prog_id(ours.get());
  if (bpf_xdp_query(ifindex, 0, &q) != 0 || our_id == 0 ||
      (q.drv_prog_id != our_id && q.skb_prog_id != our_id)) {
    return {};  // not on the interface any more: nothing to give back
  }
  const uint32_t mode = q.drv_prog_id == our_id ? XDP_FLAGS_DRV_MODE : XDP_FLAGS_SKB_MODE;
  Fd slot(bpf_obj_get((dir + "/" + kSlotPin).c_str()));
  uint32_t zero = 0, next_id = 0;
  if (slot.valid()) (void)bpf_map_lookup_elem(slot.get(), &zero, &next_id);
  Fd next(next_id != 0 ? bpf_prog_get_fd_by_id(next_id) : -1);
  int err;
  if (next.valid()) {
    err = swap_prog(ifindex, mode, next.get(), ours.get());
  } else {
    bpf_xdp_attach_opts o{};
    o.sz = sizeof(o);
    o.old_prog_fd = ours.get();
    err = bpf_xdp_detach(ifindex, mode | XDP_FLAGS_REPLACE, &o);
  }
  if (err != 0) {
    return " XDP program (giving the hook back to " +
           (next_id ? "program id " + std::to_string(next_id) : std::string("none")) +
           "): " + errno_text(err) + ";";
  }
  return {};
}

std::string xdp_slot_text(const std::string& dir) {
  Fd slot(bpf_obj_get((dir + "/" + kSlotPin).c_str()));
  uint32_t zero = 0, id = 0;
  if (!slot.valid() || bpf_map_lookup_elem(slot.get(), &zero, &id) != 0 || id == 0) return "none";
  Fd fd(bpf_prog_get_fd_by_id(id));
  return "id " + std::to_string(id) + " (" + (fd.valid() ? prog_name(fd.get()) : "?") + ")";
}

}  // namespace edgeshed
