#include "dataplane/request_filter.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <net/if.h>

#include <cerrno>

#include "dataplane/errno_message.h"

namespace edgeshed {
namespace {

// After the TC hook's own filter (handle 0xed5, priority 1): a SYN is
// decided there first, and an established frame it passes comes here.
constexpr uint32_t kRequestFilterHandle = 0xed6;
constexpr uint32_t kRequestFilterPriority = 2;

bpf_tc_hook ingress(int ifindex) {
  bpf_tc_hook hook{};
  hook.sz = sizeof(hook);
  hook.ifindex = ifindex;
  hook.attach_point = BPF_TC_INGRESS;
  return hook;
}

bpf_tc_opts filter_opts() {
  bpf_tc_opts opts{};
  opts.sz = sizeof(opts);
  opts.handle = kRequestFilterHandle;
  opts.priority = kRequestFilterPriority;
  return opts;
}

}  // namespace

Result<RequestFilter> RequestFilter::create(const std::string& iface, int prog_fd) {
  if (prog_fd < 0) return RequestFilter(iface, Fd());
  Fd prog(fcntl(prog_fd, F_DUPFD_CLOEXEC, 0));
  if (!prog.valid()) {
    return make_error("cannot keep the request filter's program: " + errno_text(errno));
  }
  return RequestFilter(iface, std::move(prog));
}

Status RequestFilter::set(bool on, const Maps& maps) const {
  const unsigned idx = if_nametoindex(iface_.c_str());
  if (idx == 0) return make_error("no such interface: " + iface_);
  const int ifindex = static_cast<int>(idx);
  if (!on) {
    const std::string problems = remove_request_filter(ifindex);
    if (!problems.empty()) return make_error(iface_ + ": cannot remove:" + problems);
    return {};
  }
  if (!prog_.valid()) {
    return make_error(iface_ +
                      ": keepalive = \"refuse\" needs the kernel's request accounting "
                      "(tp_btf/sk_data_ready and tcp_sendmsg_locked, Linux 6.11 or later)");
  }
  bpf_tc_hook hook = ingress(ifindex);
  const int err = bpf_tc_hook_create(&hook);
  if (err != 0 && err != -EEXIST) {
    return make_error("cannot add a clsact qdisc to " + iface_ +
                      " for the request filter: " + errno_text(err));
  }
  if (err == 0) {
    auto cfg = maps.read_config();
    if (!cfg) return cfg.error();
    cfg->flags |= EDGESHED_CFG_F_OWNS_QDISC;
    if (auto s = maps.write_config(*cfg); !s) return s;
  }
  bpf_tc_opts opts = filter_opts();
  opts.prog_fd = prog_.get();
  opts.flags = BPF_TC_F_REPLACE;
  if (int e = bpf_tc_attach(&hook, &opts); e != 0) {
    return make_error("cannot attach the request filter to " + iface_ + ": " + errno_text(e));
  }
  return {};
}

std::string remove_request_filter(int ifindex) {
  bpf_tc_hook hook = ingress(ifindex);
  bpf_tc_opts opts = filter_opts();
  if (int e = bpf_tc_detach(&hook, &opts); e != 0 && e != -ENOENT && e != -EINVAL) {
    return " tc request filter: " + errno_text(e) + ";";
  }
  return "";
}

}  // namespace edgeshed
