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

// One line of a message head's header fields: "name: value", the value
// without the spaces around it; well_formed false when the line has no
// colon.
struct HeaderField {
  bool well_formed = false;
  std::string_view name;
  std::string_view value;
};

// The field line of head that starts at `from`; `from` moves to the next
// one (past head's end after the last).
inline HeaderField next_field(std::string_view head, size_t& from) {
  size_t to = head.find("\r\n", from);
  if (to == std::string_view::npos) to = head.size();
  std::string_view line = head.substr(from, to - from);
  from = to + 2;
  HeaderField f;
  size_t colon = line.find(':');
  if (colon == std::string_view::npos) return f;
  f.well_formed = true;
  f.name = line.substr(0, colon);
  f.value = line.substr(colon + 1);
  while (!f.value.empty() && f.value.front() == ' ') f.value.remove_prefix(1);
  while (!f.value.empty() && f.value.back() == ' ') f.value.remove_suffix(1);
  return f;
}

}  // namespace edgeshed::tools
