// Fields and lines of the kernel's text files, as views into the text: the
// parsers of files read every tick allocate nothing to split them.
#pragma once

#include <string_view>

namespace edgeshed::signals {

inline bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// The next blank-separated field of rest, consumed; empty at the end.
inline std::string_view next_field(std::string_view& rest) {
  std::size_t i = 0;
  while (i < rest.size() && is_blank(rest[i])) ++i;
  const std::size_t start = i;
  while (i < rest.size() && !is_blank(rest[i])) ++i;
  const std::string_view field = rest.substr(start, i - start);
  rest.remove_prefix(i);
  return field;
}

// The next line of rest, without its newline, consumed.
inline std::string_view next_line(std::string_view& rest) {
  const std::size_t newline = rest.find('\n');
  const std::string_view line = rest.substr(0, newline);
  rest.remove_prefix(newline == std::string_view::npos ? rest.size() : newline + 1);
  return line;
}

}  // namespace edgeshed::signals
