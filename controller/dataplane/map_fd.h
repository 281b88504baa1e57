// File descriptors of the data plane's maps: from a loaded skeleton, or from
// the pins of an attached interface.
#pragma once

#include <string>

#include "common/fd.h"
#include "common/result.h"

struct bpf_map;

namespace edgeshed {

// A descriptor of its own for a map of a loaded object.
Result<Fd> dup_map_fd(const bpf_map* map);
// The map pinned as dir/name.
Result<Fd> open_pin(const std::string& dir, const char* name);

}  // namespace edgeshed
