#include "cli/version.h"

#include <bpf/libbpf.h>
#include <fmt/format.h>
#include <sys/utsname.h>

#include "edgeshed/abi.h"

#ifndef EDGESHED_VERSION
#error "EDGESHED_VERSION comes from the project's version in CMakeLists.txt"
#endif

namespace edgeshed {

std::string version_text() {
  utsname u{};
  const std::string kernel = uname(&u) == 0 ? std::string(u.release) : "unknown";
  return fmt::format(
      "edgeshed {}\n"
      "data plane ABI {} (a pinned data plane of another ABI is refused)\n"
      "libbpf {}\n"
      "kernel {} (requests timed in the kernel, which the default limit learns from, need 6.11 "
      "or later)",
      EDGESHED_VERSION, EDGESHED_ABI_VERSION, libbpf_version_string(), kernel);
}

}  // namespace edgeshed
