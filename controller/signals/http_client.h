// A minimal HTTP/1.1 client for scraping and probing: GET only, plain http,
// one connection kept alive between requests.
//
// Written here rather than taken from cpp-httplib because a scrape needs a
// deadline on the whole exchange (httplib's timeouts are per read, so a
// server trickling bytes can hold it indefinitely), a hard cap on the body
// while it is read, and a way to abort at once when the daemon stops; and
// because GET with Content-Length, chunked or read-to-close bodies is small.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/fd.h"
#include "common/result.h"
#include "signals/net_io.h"

namespace edgeshed::signals {

struct HttpUrl {
  std::string host;  // a name or an address literal, without brackets
  uint16_t port = 80;
  std::string target = "/";  // path and query
  std::string authority;     // the Host header: "host:port", IPv6 in brackets

  std::string to_string() const { return "http://" + authority + target; }
};

// http://host[:port][/path][?query]; https, user info and empty hosts are
// rejected with the reason.
Result<HttpUrl> parse_http_url(std::string_view url);

struct HttpResponse {
  int status = 0;
  std::string reason;
  std::string content_type;
  std::string body;
};

class HttpClient {
 public:
  struct Options {
    std::chrono::nanoseconds timeout = std::chrono::milliseconds(200);  // whole exchange
    std::size_t max_body_bytes = 4 << 20;
    // false: "Connection: close" and a new connection per request, which is
    // what a probe measures.
    bool keep_alive = true;
    std::optional<SocketAddress> source;  // local address to bind
    std::string accept;                   // Accept header; empty: none
  };

  HttpClient(HttpUrl url, Options options) : url_(std::move(url)), options_(std::move(options)) {}

  // One GET of the URL within options.timeout. Reuses the connection the
  // previous response left open; if the server had closed it meanwhile,
  // retries once on a new one. Any error closes the connection.
  Result<HttpResponse> get(int cancel_fd = -1);

  const HttpUrl& url() const { return url_; }
  // New connections opened so far; keep-alive keeps this at one.
  uint64_t connections_opened() const { return connections_opened_; }

 private:
  Status connect(const IoLimits& limits);
  // `reused`: the request went out on a kept connection, so a close before
  // any response byte means the server dropped an idle connection.
  Result<HttpResponse> exchange(const IoLimits& limits, bool reused, bool& retry);

  HttpUrl url_;
  Options options_;
  Fd connection_;
  uint64_t connections_opened_ = 0;
};

}  // namespace edgeshed::signals
