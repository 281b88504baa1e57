// Real TCP sockets on loopback for the tests that watch the kernel count,
// queue or report them.
#pragma once

#include <cstdint>

#include "common/fd.h"

namespace edgeshed::testing {

// A listener on an ephemeral port: 127.0.0.1 for AF_INET, dual-stack [::]
// for AF_INET6 (v4 clients then arrive v4-mapped). Sets *port.
Fd listen_on_loopback(int family, uint16_t* port, int backlog = 64);

// A connected client: to 127.0.0.1 for AF_INET, to ::1 for AF_INET6.
Fd connect_loopback(int family, uint16_t port);

}  // namespace edgeshed::testing
