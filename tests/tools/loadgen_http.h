// The little HTTP/1.1 that loadgen speaks: one request text, and a parser that
// says when a response in a buffer is complete. Enough for refserver and for
// any server that sends Content-Length; chunked bodies are reported malformed.
#pragma once

#include <charconv>
#include <cstddef>
#include <string>
#include <string_view>

#include "http_text.h"

namespace edgeshed::loadgen {

using tools::iequals;
using tools::next_field;

inline std::string make_request(std::string_view path, std::string_view host, bool keep_alive) {
  std::string r;
  r.reserve(96);
  r.append("GET ").append(path).append(" HTTP/1.1\r\nHost: ").append(host);
  r.append(keep_alive ? "\r\nConnection: keep-alive\r\n\r\n" : "\r\nConnection: close\r\n\r\n");
  return r;
}

inline bool icontains(std::string_view haystack, std::string_view needle) {
  for (size_t i = 0; i + needle.size() <= haystack.size(); ++i) {
    if (iequals(haystack.substr(i, needle.size()), needle)) return true;
  }
  return false;
}

struct ResponseProgress {
  enum State { kIncomplete, kComplete, kMalformed } state = kIncomplete;
  int status = 0;
  size_t length = 0;           // bytes of the complete response, head and body
  bool server_closes = false;  // "Connection: close": the connection is done after it
};

// Looks at the bytes received so far. `eof` says the server closed: a response
// without Content-Length is then complete, one with it is cut short.
inline ResponseProgress parse_response(std::string_view buf, bool eof) {
  ResponseProgress p;
  constexpr size_t kMaxHead = size_t{16} * 1024;
  size_t head_end = buf.find("\r\n\r\n");
  if (head_end == std::string_view::npos) {
    if (buf.size() > kMaxHead || eof) p.state = ResponseProgress::kMalformed;
    return p;
  }
  std::string_view head = buf.substr(0, head_end);
  size_t line_end = head.find("\r\n");
  std::string_view status_line = head.substr(0, line_end);
  // "HTTP/1.1 200 OK": the code is the three digits after the first space.
  if (!status_line.starts_with("HTTP/1.") || status_line.size() < 12 || status_line[8] != ' ') {
    p.state = ResponseProgress::kMalformed;
    return p;
  }
  auto [end, ec] = std::from_chars(status_line.data() + 9, status_line.data() + 12, p.status);
  if (ec != std::errc() || end != status_line.data() + 12) {
    p.state = ResponseProgress::kMalformed;
    return p;
  }
  bool has_length = false;
  bool keep_alive = false;
  size_t content_length = 0;
  size_t from = line_end == std::string_view::npos ? head.size() : line_end + 2;
  while (from < head.size()) {
    const auto [well_formed, name, value] = next_field(head, from);
    if (!well_formed) continue;
    if (iequals(name, "content-length")) {
      auto [vend, vec] = std::from_chars(value.data(), value.data() + value.size(), content_length);
      if (vec != std::errc() || vend != value.data() + value.size()) {
        p.state = ResponseProgress::kMalformed;
        return p;
      }
      has_length = true;
    } else if (iequals(name, "transfer-encoding")) {
      p.state = ResponseProgress::kMalformed;
      return p;
    } else if (iequals(name, "connection")) {
      if (icontains(value, "close")) p.server_closes = true;
      if (icontains(value, "keep-alive")) keep_alive = true;
    }
  }
  // HTTP/1.0 closes unless asked not to.
  if (!status_line.starts_with("HTTP/1.1") && !keep_alive) p.server_closes = true;
  size_t body_start = head_end + 4;
  if (!has_length) {
    p.server_closes = true;
    if (eof) {
      p.state = ResponseProgress::kComplete;
      p.length = buf.size();
    }
    return p;
  }
  if (buf.size() >= body_start + content_length) {
    p.state = ResponseProgress::kComplete;
    p.length = body_start + content_length;
  } else if (eof) {
    p.state = ResponseProgress::kMalformed;
  }
  return p;
}

}  // namespace edgeshed::loadgen
