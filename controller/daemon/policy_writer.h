// Turns a control-law decision into the data plane's policy set.
#pragma once

#include <cstdint>

#include "edgeshed/abi.h"
#include "law/control_law.h"

namespace edgeshed::daemon {

// Unlimited limits become the ABI's 0 ("none"); an admit fraction becomes
// the complementary shed fraction in 1/EDGESHED_FRAC_ONE.
edgeshed_class_policy to_abi(const law::ClassPolicy& policy);

// max_connections caps each class's established connections (0: none); a
// fail-open decision admits everything all the same.
edgeshed_policy_set to_policy_set(const law::Decision& decision, uint64_t generation,
                                  uint32_t max_connections = 0);

}  // namespace edgeshed::daemon
