// libbpf returns -errno; this turns one into a message, once, at the boundary.
#pragma once

#include <cstring>
#include <string>

namespace edgeshed {

inline std::string errno_text(int err) {
  if (err < 0) err = -err;
  return std::string(std::strerror(err));
}

}  // namespace edgeshed
