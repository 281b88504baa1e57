#include "dataplane/skeleton.h"

#include <bpf/libbpf.h>

#include "dataplane/errno_message.h"
#include "edgeshed.skel.h"

namespace edgeshed {

void SkeletonDeleter::operator()(edgeshed_bpf* skel) const { edgeshed_bpf__destroy(skel); }

Result<Skeleton> Skeleton::load(const std::string& pin_dir) {
  Skeleton skel(edgeshed_bpf__open());
  if (!skel.get()) {
    return make_error("cannot open the BPF object: " + errno_text(errno));
  }
  if (!pin_dir.empty()) {
    bpf_map* map;
    bpf_object__for_each_map(map, skel->obj) {
      std::string path = pin_dir + "/" + bpf_map__name(map);
      if (int err = bpf_map__set_pin_path(map, path.c_str()); err) {
        return make_error("cannot set pin path " + path + ": " + errno_text(err));
      }
    }
  }
  if (int err = edgeshed_bpf__load(skel.get()); err) {
    std::string hint = err == -EPERM ? " (run as root: CAP_BPF and CAP_NET_ADMIN are needed)" : "";
    if (!pin_dir.empty() && err == -EINVAL) {
      hint = " (maps pinned in " + pin_dir + " do not match this build; run `edgeshed detach`)";
    }
    return make_error("cannot load the BPF programs: " + errno_text(err) + hint);
  }
  return skel;
}

}  // namespace edgeshed
