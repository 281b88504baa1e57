// The parts with a separator between them: "eth0, eth1" for a message,
// "off observe enforce" for a completion word list.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace edgeshed {

inline std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty()) out += separator;
    out += p;
  }
  return out;
}

}  // namespace edgeshed
