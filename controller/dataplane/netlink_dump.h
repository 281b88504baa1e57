// A netlink dump: one request, then every reply message until NLMSG_DONE,
// each bounded by the datagram it came in before it is handed on.
#pragma once

#include <linux/netlink.h>

#include <functional>
#include <span>
#include <string_view>

#include "common/result.h"

namespace edgeshed {

// Sends request (a whole netlink message with NLM_F_REQUEST | NLM_F_DUMP)
// on fd and calls on_message with each reply message of type reply_type;
// what names the dump in errors ("sock_diag", "route dump").
Status netlink_dump(int fd, std::span<const std::byte> request, uint16_t reply_type,
                    std::string_view what, const std::function<void(const nlmsghdr&)>& on_message);

}  // namespace edgeshed
