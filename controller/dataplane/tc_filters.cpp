#include "dataplane/tc_filters.h"

#include <cerrno>

#include "dataplane/errno_message.h"

namespace edgeshed {
namespace {

bpf_tc_opts filter_opts(TcFilter filter) {
  bpf_tc_opts opts{};
  opts.sz = sizeof(opts);
  opts.handle = filter.handle;
  opts.priority = filter.priority;
  return opts;
}

}  // namespace

bpf_tc_hook tc_ingress_hook(int ifindex) {
  bpf_tc_hook hook{};
  hook.sz = sizeof(hook);
  hook.ifindex = ifindex;
  hook.attach_point = BPF_TC_INGRESS;
  return hook;
}

int tc_create_clsact(int ifindex) {
  bpf_tc_hook hook = tc_ingress_hook(ifindex);
  return bpf_tc_hook_create(&hook);
}

int tc_attach_filter(int ifindex, TcFilter filter, int prog_fd) {
  bpf_tc_hook hook = tc_ingress_hook(ifindex);
  bpf_tc_opts opts = filter_opts(filter);
  opts.prog_fd = prog_fd;
  opts.flags = BPF_TC_F_REPLACE;
  return bpf_tc_attach(&hook, &opts);
}

std::string tc_detach_filter(int ifindex, TcFilter filter, std::string_view what) {
  bpf_tc_hook hook = tc_ingress_hook(ifindex);
  bpf_tc_opts opts = filter_opts(filter);
  // ENOENT: no such filter; EINVAL: no clsact qdisc at all.
  if (int e = bpf_tc_detach(&hook, &opts); e != 0 && e != -ENOENT && e != -EINVAL) {
    return " " + std::string(what) + ": " + errno_text(e) + ";";
  }
  return "";
}

std::string tc_destroy_clsact(int ifindex) {
  bpf_tc_hook hook = tc_ingress_hook(ifindex);
  hook.attach_point = static_cast<bpf_tc_attach_point>(BPF_TC_INGRESS | BPF_TC_EGRESS);
  if (int e = bpf_tc_hook_destroy(&hook); e != 0 && e != -ENOENT) {
    return " clsact qdisc: " + errno_text(e) + ";";
  }
  return "";
}

}  // namespace edgeshed
