// The HTTP/1.x that refserver understands, as pure functions: finding one
// request in a buffer, whether the connection stays open after it, and the
// service time drawn for it.
#pragma once

#include <charconv>
#include <cstddef>
#include <random>
#include <string>
#include <string_view>

#include "http_text.h"

namespace edgeshed::refserver {

using tools::iequals;
using tools::next_field;

// Whether the comma-separated header value holds `token`, ignoring case.
inline bool has_token(std::string_view value, std::string_view token) {
  while (!value.empty()) {
    size_t comma = value.find(',');
    std::string_view item = value.substr(0, comma);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    if (iequals(item, token)) return true;
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return false;
}

struct Request {
  enum State { kIncomplete, kComplete, kMalformed } state = kIncomplete;
  std::string_view method, path;  // views into the parsed buffer
  bool keep_alive = false;
  size_t length = 0;  // bytes of the request, head and body, once complete
};

constexpr size_t kMaxRequestHead = size_t{16} * 1024;

// Finds the first request in `buf`. HTTP/1.1 keeps the connection open unless
// the client says "Connection: close"; HTTP/1.0 closes unless it says
// "keep-alive". A body (Content-Length) is part of the request and skipped.
inline Request parse_request(std::string_view buf) {
  Request r;
  size_t head_end = buf.find("\r\n\r\n");
  if (head_end == std::string_view::npos) {
    if (buf.size() > kMaxRequestHead) r.state = Request::kMalformed;
    return r;
  }
  std::string_view head = buf.substr(0, head_end);
  size_t line_end = head.find("\r\n");
  std::string_view line = head.substr(0, line_end);
  size_t sp1 = line.find(' ');
  size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || sp1 == 0 || sp2 == sp1 + 1) {
    r.state = Request::kMalformed;
    return r;
  }
  r.method = line.substr(0, sp1);
  r.path = line.substr(sp1 + 1, sp2 - sp1 - 1);
  std::string_view version = line.substr(sp2 + 1);
  if (version != "HTTP/1.1" && version != "HTTP/1.0") {
    r.state = Request::kMalformed;
    return r;
  }
  bool close = false, keep_alive = false;
  size_t content_length = 0;
  size_t from = line_end == std::string_view::npos ? head.size() : line_end + 2;
  while (from < head.size()) {
    const auto [well_formed, name, value] = next_field(head, from);
    if (!well_formed) {
      r.state = Request::kMalformed;
      return r;
    }
    if (iequals(name, "connection")) {
      close = close || has_token(value, "close");
      keep_alive = keep_alive || has_token(value, "keep-alive");
    } else if (iequals(name, "content-length")) {
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), content_length);
      if (ec != std::errc() || end != value.data() + value.size()) {
        r.state = Request::kMalformed;
        return r;
      }
    } else if (iequals(name, "transfer-encoding")) {
      r.state = Request::kMalformed;  // chunked request bodies: not for a lab server
      return r;
    }
  }
  r.keep_alive = version == "HTTP/1.1" ? !close : keep_alive && !close;
  size_t total = head_end + 4 + content_length;
  if (buf.size() < total) return r;  // body still on its way
  r.state = Request::kComplete;
  r.length = total;
  return r;
}

// Whether the path asks for the long-lived stream ("/stream", "/stream?x").
inline bool is_stream_path(std::string_view path) {
  return path == "/stream" || path.starts_with("/stream?") || path.starts_with("/stream/");
}

enum class ServiceDist { kFixed, kExp, kUniform };

inline bool parse_service_dist(std::string_view text, ServiceDist* out) {
  if (text == "fixed") {
    *out = ServiceDist::kFixed;
  } else if (text == "exp") {
    *out = ServiceDist::kExp;
  } else if (text == "uniform") {
    *out = ServiceDist::kUniform;
  } else {
    return false;
  }
  return true;
}

// A service time with mean `mean_ms` whatever the distribution: exponential
// with that mean, or uniform on [0, 2 * mean].
template <class Rng>
double draw_service_ms(ServiceDist dist, double mean_ms, Rng& rng) {
  if (mean_ms <= 0) return 0;
  switch (dist) {
    case ServiceDist::kFixed:
      return mean_ms;
    case ServiceDist::kExp:
      return std::exponential_distribution<double>(1.0 / mean_ms)(rng);
    case ServiceDist::kUniform:
      return std::uniform_real_distribution<double>(0.0, 2.0 * mean_ms)(rng);
  }
  return mean_ms;
}

}  // namespace edgeshed::refserver
