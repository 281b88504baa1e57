// The HTTP/1.1 client of the scrapes and probes: GET only, plain http, one
// connection kept alive between requests. libcurl does the protocol (framing,
// interim responses, reuse of a kept connection and the one retry when the
// server had closed it); this adds what a scrape needs on top: a deadline on
// the whole exchange (CURLOPT_TIMEOUT_MS, not per read, so a server trickling
// bytes cannot hold it), a hard cap on the body while it is read, and an
// abort at once when the daemon stops (the cancel fd, polled with curl's own
// sockets). cpp-httplib was not used: its timeouts are per read.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

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

// http://host[:port][/path][?query], as libcurl's URL API reads it; https,
// user info, port 0 and what curl refuses are rejected with the reason.
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

  HttpClient(HttpUrl url, Options options);
  ~HttpClient();
  HttpClient(HttpClient&& other) noexcept;
  HttpClient& operator=(HttpClient&& other) noexcept;

  // One GET of the URL within options.timeout. Reuses the connection the
  // previous response left open; if the server had closed it meanwhile,
  // retries once on a new one. Any error closes the connection.
  Result<HttpResponse> get(int cancel_fd = -1);

  const HttpUrl& url() const { return url_; }
  // New connections opened so far; keep-alive keeps this at one.
  uint64_t connections_opened() const { return connections_opened_; }

 private:
  struct Handles;  // libcurl's, kept out of this header
  struct Exchange;
  Status setup();
  Status perform(Exchange& exchange, int cancel_fd);

  HttpUrl url_;
  Options options_;
  std::unique_ptr<Handles> handles_;  // made by the first get()
  uint64_t connections_opened_ = 0;
};

}  // namespace edgeshed::signals
