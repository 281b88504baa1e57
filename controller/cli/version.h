// `edgeshed --version`: what an operator reporting a problem needs to say
// which edgeshed runs where.
#pragma once

#include <string>

namespace edgeshed {

// Lines: the version, the data plane's ABI, libbpf's version and the
// running kernel's release.
std::string version_text();

}  // namespace edgeshed
