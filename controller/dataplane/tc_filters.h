// edgeshed's filters at an interface's TC ingress, each known by its handle
// and priority: the TC hook's own, and the request filter beside either
// hook, after it (a SYN is decided first; an established frame it passes
// goes on to the next filter).
#pragma once

#include <bpf/libbpf.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace edgeshed {

struct TcFilter {
  uint32_t handle;
  uint32_t priority;
};
inline constexpr TcFilter kHookFilter{0xed5, 1};
inline constexpr TcFilter kRequestFilter{0xed6, 2};

bpf_tc_hook tc_ingress_hook(int ifindex);
// bpf_tc_hook_create on the ingress hook: 0 when it added the clsact qdisc,
// -EEXIST when there was one, another negative errno when it failed.
int tc_create_clsact(int ifindex);
// Attaches prog_fd as the filter, or swaps the program of the one there in
// one netlink change; 0 or a negative errno.
int tc_attach_filter(int ifindex, TcFilter filter, int prog_fd);
// Removes the filter (gone already is fine); "" or " what: why;".
std::string tc_detach_filter(int ifindex, TcFilter filter, std::string_view what);
// Removes the clsact qdisc with whatever is left in it; "" or " clsact
// qdisc: why;".
std::string tc_destroy_clsact(int ifindex);

}  // namespace edgeshed
