#include "dataplane/request_filter.h"

#include <fcntl.h>
#include <net/if.h>

#include <cerrno>

#include "dataplane/errno_message.h"
#include "dataplane/tc_filters.h"

namespace edgeshed {

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
  const int err = tc_create_clsact(ifindex);
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
  if (int e = tc_attach_filter(ifindex, kRequestFilter, prog_.get()); e != 0) {
    return make_error("cannot attach the request filter to " + iface_ + ": " + errno_text(e));
  }
  return {};
}

std::string remove_request_filter(int ifindex) {
  return tc_detach_filter(ifindex, kRequestFilter, "tc request filter");
}

}  // namespace edgeshed
