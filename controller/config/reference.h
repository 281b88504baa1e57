// What the config's choices mean, in one sentence each: the README's
// signal-kind and limit-algorithm tables are generated from here
// (scripts/gen_readme.sh), so that they list exactly the names the parser
// takes. Indexed like the name tables they describe.
#pragma once

#include <array>
#include <string_view>

#include "common/names.h"
#include "config/parse_sections.h"
#include "law/limit_algorithm.h"

namespace edgeshed::config::reference {

inline constexpr std::array<std::string_view, sections::kSignalKindNames.size()>
    kSignalKindMeanings = {
        "requests in service on the protected ports, counted by the data plane",
        "sojourn time of the oldest connection still waiting to be accepted (or depth, or fill). "
        "Queues come from a sock_diag dump of the listeners; a BPF iterator walks the TCP sockets "
        "for the sojourn only while a protected queue is not empty",
        "SYNs, admissions or sheds per second, from the data plane's counters",
        "increase per second of a TcpExt counter such as `ListenDrops`, which is hard evidence of "
        "accept-queue collapse (read at most every 250 ms)",
        "share of the tick that tasks stalled on CPU, memory or IO (`/proc/pressure` or a cgroup)",
        "a gauge, or a windowed histogram quantile, scraped from the service's `/metrics`",
        "latency of a TCP connect (and optional HTTP GET) to the service. Its `source` address is "
        "made critical",
        "a fixed number (`value`, default 0), for tests and for holding a level by config",
        "a number read from a file, for external tools and tests",
        "response time (a request's arrival to the server's first byte back) or connection time, "
        "p50/p90/p99 or mean, measured by the data plane in the kernel with no help from the "
        "service (Linux 6.11 or later); a port's `latency_objective` adds one",
        "requests in service of the normal and background classes over the adaptive limit (1: the "
        "limit binds and sheds), at most 1.5; a config without `[[signal]]` gets this one alone",
};

// Indexed by law::LimitAlgorithmKind, like names::kLimitAlgorithms.
inline constexpr auto kLimitAlgorithmMeanings = names::table<names::kLimitAlgorithms.size()>(
    "fixed at `initial`", "additive increase, multiplicative decrease on a latency signal",
    "follows a latency signal against a learnt baseline",
    "finds the service's capacity from the response time the data plane measures in the "
    "kernel: learns the no-queue latency with a short probe, then holds the p90 within 10% "
    "of it; needs nothing else");

}  // namespace edgeshed::config::reference
