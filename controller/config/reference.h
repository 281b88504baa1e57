// What the config's limit algorithms mean, in one sentence each: the
// README's table of them is generated from here (scripts/gen_readme.sh), so
// that it lists exactly the names the parser takes. (The signal kinds' table
// comes from signals/signal_kinds.cpp.)
#pragma once

#include <array>
#include <string_view>

#include "common/names.h"
#include "law/limit_algorithm.h"

namespace edgeshed::config::reference {

// Indexed by law::LimitAlgorithmKind, like names::kLimitAlgorithms.
inline constexpr auto kLimitAlgorithmMeanings = names::table<names::kLimitAlgorithms.size()>(
    "fixed at `initial`", "additive increase, multiplicative decrease on a latency signal",
    "follows a latency signal against a learnt baseline",
    "finds the service's capacity from the response time the data plane measures in the "
    "kernel: learns the no-queue latency with a short probe, then holds the p90 within 10% "
    "of it; needs nothing else");

}  // namespace edgeshed::config::reference
