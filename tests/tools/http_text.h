// Text rules of HTTP/1.1 that both test tools (refserver, loadgen) follow.
#pragma once

#include <cstddef>
#include <string_view>

namespace edgeshed::tools {

// Header names and tokens compare ignoring ASCII case (RFC 9110, 5.1).
inline bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

}  // namespace edgeshed::tools
