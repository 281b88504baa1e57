// The directories under the pin root: bpffs mounted, directories of our own
// user only, and the host's directory, which every interface's data plane
// shares (EDGESHED_HOST_PIN_DIR in abi.h).
#pragma once

#include <string>

#include "common/fd.h"
#include "common/result.h"
#include "edgeshed/abi.h"

namespace edgeshed {

// Mounts bpffs on /sys/fs/bpf when neither it nor the pin root is one.
Status ensure_bpffs();
// Whether a pin (or any path) exists.
bool path_exists(const std::string& path);
// Whoever owns a pin directory can swap the maps and programs in it, so
// only a directory of our own user is trusted, whatever its mode.
Status owned_by_us(const std::string& path);
// Creates path (mode 0700) if missing; refuses one of another user.
Status make_private_dir(const std::string& path);

// The directory of the host's limits, beside the interfaces' directories
// under pin_root.
std::string host_pin_dir(const std::string& pin_root = EDGESHED_PIN_ROOT);
// Held while an interface's maps are loaded, or its pins and then the
// host's removed: the host's directory goes with the last interface, never
// while another one attaches. Taken after the interface's own lock.
Result<Fd> lock_pin_root(const std::string& pin_root = EDGESHED_PIN_ROOT);
// Once no interface's directory is left under pin_root, removes the host's
// pins and directory; what could not be removed, else empty.
std::string remove_host_pins_if_last(const std::string& pin_root = EDGESHED_PIN_ROOT);

}  // namespace edgeshed
