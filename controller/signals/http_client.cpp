#include "signals/http_client.h"

#include <poll.h>

#include <charconv>

namespace edgeshed::signals {
namespace {

constexpr std::size_t kMaxHeaderBytes = 64 << 10;
constexpr std::size_t kMaxLineBytes = 8 << 10;

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// Whether a comma-separated header value lists `token` (case-insensitive).
bool has_token(std::string_view value, std::string_view token) {
  while (!value.empty()) {
    std::size_t comma = value.find(',');
    if (lower(trim(value.substr(0, comma))) == token) return true;
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return false;
}

template <class T>
bool parse_number(std::string_view text, T& out, int base = 10) {
  if (text.empty()) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out, base);
  return ec == std::errc() && end == text.data() + text.size();
}

// Reads a response off a socket, buffering what arrives ahead of its use.
class ResponseReader {
 public:
  ResponseReader(int fd, const IoLimits& limits, std::string peer)
      : fd_(fd), limits_(limits), peer_(std::move(peer)) {}

  bool received_any() const { return received_ > 0; }
  bool has_unread() const { return pos_ < buffer_.size(); }

  // Up to CRLF (a bare LF is accepted too), without it.
  Result<std::string> line(std::string_view what) {
    for (;;) {
      std::size_t newline = buffer_.find('\n', pos_);
      if (newline != std::string::npos) {
        std::string out = buffer_.substr(pos_, newline - pos_);
        pos_ = newline + 1;
        if (!out.empty() && out.back() == '\r') out.pop_back();
        return out;
      }
      if (buffer_.size() - pos_ > kMaxLineBytes) {
        return make_error(std::string(what) + " longer than " + std::to_string(kMaxLineBytes) +
                          " bytes");
      }
      auto more = fill("waiting for the " + std::string(what));
      if (!more) return more.error();
      if (!*more) return make_error(closed_message(what));
    }
  }

  Status exact(std::size_t n, std::string& out) {
    while (buffer_.size() - pos_ < n) {
      auto more = fill("reading the response body");
      if (!more) return more.error();
      if (!*more) return make_error(closed_message("body"));
    }
    out.append(buffer_, pos_, n);
    pos_ += n;
    compact();
    return {};
  }

  Status to_eof(std::string& out, std::size_t max) {
    for (;;) {
      out.append(buffer_, pos_, std::string::npos);
      pos_ = buffer_.size();
      compact();
      if (out.size() > max) return make_error(too_large(max));
      auto more = fill("reading the response body");
      if (!more) return more.error();
      if (!*more) return {};
    }
  }

  static std::string too_large(std::size_t max) {
    return "response body larger than the limit of " + std::to_string(max) + " bytes";
  }

 private:
  // false at end of stream.
  Result<bool> fill(const std::string& doing) {
    char chunk[16 << 10];
    auto n = receive_some(fd_, chunk, sizeof(chunk), limits_, doing + " from " + peer_);
    if (!n) return n.error();
    if (*n == 0) return false;
    received_ += *n;
    buffer_.append(chunk, *n);
    return true;
  }

  void compact() {
    if (pos_ > (64 << 10)) {
      buffer_.erase(0, pos_);
      pos_ = 0;
    }
  }

  std::string closed_message(std::string_view what) const {
    return received_ == 0 ? "connection closed before a response"
                          : "connection closed in the middle of the " + std::string(what);
  }

  int fd_;
  const IoLimits& limits_;
  std::string peer_;
  std::string buffer_;
  std::size_t pos_ = 0;
  std::size_t received_ = 0;
};

struct Head {
  int status = 0;
  std::string reason;
  bool http10 = false;
  bool chunked = false;
  bool close = false;
  std::optional<std::size_t> content_length;
  std::string content_type;
};

Result<Head> read_head(ResponseReader& reader) {
  Head head;
  for (;;) {
    auto status_line = reader.line("status line");
    if (!status_line) return status_line.error();
    // "HTTP/1.1 200 OK"
    std::string_view s = *status_line;
    if (s.size() < 12 || !s.starts_with("HTTP/1.") || s[8] != ' ' ||
        !parse_number(s.substr(9, 3), head.status) || (s.size() > 12 && s[12] != ' ')) {
      return make_error("bad status line '" + std::string(s.substr(0, 60)) + "'");
    }
    head.http10 = s[7] == '0';
    head.reason = s.size() > 13 ? std::string(s.substr(13)) : "";
    std::size_t header_bytes = 0;
    for (;;) {
      auto line = reader.line("headers");
      if (!line) return line.error();
      if (line->empty()) break;
      header_bytes += line->size();
      if (header_bytes > kMaxHeaderBytes) {
        return make_error("response headers longer than " + std::to_string(kMaxHeaderBytes) +
                          " bytes");
      }
      std::size_t colon = line->find(':');
      if (colon == std::string::npos || colon == 0) {
        return make_error("bad header line '" + line->substr(0, 60) + "'");
      }
      std::string name = lower(std::string_view(*line).substr(0, colon));
      std::string_view value = trim(std::string_view(*line).substr(colon + 1));
      if (name == "content-length") {
        std::size_t length = 0;
        if (!parse_number(value, length) ||
            (head.content_length && *head.content_length != length)) {
          return make_error("bad Content-Length '" + std::string(value) + "'");
        }
        head.content_length = length;
      } else if (name == "transfer-encoding") {
        if (lower(value) != "chunked") {
          return make_error("unsupported Transfer-Encoding '" + std::string(value) + "'");
        }
        head.chunked = true;
      } else if (name == "connection") {
        head.close = has_token(value, "close");
      } else if (name == "content-encoding") {
        if (lower(value) != "identity") {
          return make_error("compressed response (Content-Encoding: " + std::string(value) +
                            ") is not supported");
        }
      } else if (name == "content-type") {
        head.content_type = value;
      }
    }
    // Interim responses (100 Continue, 103 Early Hints) precede the real one.
    if (head.status >= 100 && head.status < 200 && head.status != 101) {
      head = Head{};
      continue;
    }
    if (head.status == 101) return make_error("server switched protocols (101)");
    return head;
  }
}

Status read_chunked(ResponseReader& reader, std::string& body, std::size_t max) {
  for (;;) {
    auto size_line = reader.line("chunk size");
    if (!size_line) return size_line.error();
    std::string_view hex = trim(std::string_view(*size_line).substr(0, size_line->find(';')));
    std::size_t size = 0;
    if (!parse_number(hex, size, 16)) {
      return make_error("bad chunk size '" + size_line->substr(0, 40) + "'");
    }
    if (size == 0) break;
    if (size > max || body.size() + size > max) return make_error(ResponseReader::too_large(max));
    if (auto s = reader.exact(size, body); !s) return s;
    auto end = reader.line("chunk end");
    if (!end) return end.error();
    if (!end->empty()) return make_error("chunk not followed by CRLF");
  }
  for (;;) {  // trailers, ignored
    auto trailer = reader.line("trailers");
    if (!trailer) return trailer.error();
    if (trailer->empty()) return {};
  }
}

// Whether an idle kept-alive connection has been closed by the server (or
// has unexpected bytes on it): either way it cannot carry the next request.
bool idle_connection_broken(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) != 0;
}

}  // namespace

Result<HttpUrl> parse_http_url(std::string_view url) {
  const std::string quoted = "'" + std::string(url) + "'";
  if (lower(url.substr(0, 8)) == "https://") {
    return make_error(quoted + ": https is not supported; use a plain http endpoint");
  }
  if (lower(url.substr(0, 7)) != "http://") {
    return make_error(quoted + ": must start with http://");
  }
  std::string_view rest = url.substr(7);
  rest = rest.substr(0, rest.find('#'));
  std::size_t target_start = rest.find_first_of("/?");
  std::string_view authority = rest.substr(0, target_start);
  HttpUrl out;
  if (target_start != std::string_view::npos) {
    std::string_view target = rest.substr(target_start);
    out.target = target.front() == '?' ? "/" + std::string(target) : std::string(target);
  }
  for (char c : out.target) {
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) {
      return make_error(quoted + ": the path has spaces or control characters; escape them");
    }
  }
  if (authority.find('@') != std::string_view::npos) {
    return make_error(quoted + ": user info (user@host) is not supported");
  }
  std::string_view port_text;
  if (!authority.empty() && authority.front() == '[') {
    std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return make_error(quoted + ": unterminated '['");
    out.host = std::string(authority.substr(1, close - 1));
    if (!parse_ip_address(out.host, 0)) {
      return make_error(quoted + ": '" + out.host + "' is not an IPv6 address");
    }
    std::string_view after = authority.substr(close + 1);
    if (!after.empty() && after.front() != ':') {
      return make_error(quoted + ": unexpected text after ']'");
    }
    if (!after.empty()) port_text = after.substr(1);
    if (after == ":") return make_error(quoted + ": empty port");
  } else {
    std::size_t colon = authority.find(':');
    if (colon != std::string_view::npos &&
        authority.find(':', colon + 1) != std::string_view::npos) {
      return make_error(quoted + ": an IPv6 address must be in brackets, e.g. http://[::1]:9100/");
    }
    out.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) {
      port_text = authority.substr(colon + 1);
      if (port_text.empty()) return make_error(quoted + ": empty port");
    }
    for (char c : out.host) {
      bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '.' || c == '-' || c == '_';
      if (!ok) return make_error(quoted + ": bad character in host '" + out.host + "'");
    }
  }
  if (out.host.empty()) return make_error(quoted + ": no host");
  if (!port_text.empty()) {
    unsigned port = 0;
    if (!parse_number(port_text, port) || port == 0 || port > 65535) {
      return make_error(quoted + ": port '" + std::string(port_text) + "' is not 1-65535");
    }
    out.port = static_cast<uint16_t>(port);
  }
  bool v6 = out.host.find(':') != std::string::npos;
  out.authority = (v6 ? "[" + out.host + "]" : out.host) + ":" + std::to_string(out.port);
  return out;
}

Status HttpClient::connect(const IoLimits& limits) {
  connection_.reset();
  auto addresses = resolve_host(url_.host, url_.port);
  if (!addresses) return addresses.error();
  Error last = make_error("no address");
  for (const SocketAddress& address : *addresses) {
    auto fd = tcp_connect(address, options_.source, limits);
    if (fd) {
      connection_ = std::move(*fd);
      ++connections_opened_;
      return {};
    }
    last = fd.error();
  }
  return last;
}

Result<HttpResponse> HttpClient::get(int cancel_fd) {
  const IoLimits limits = IoLimits::from_now(options_.timeout, cancel_fd);
  const std::string what = "GET " + url_.to_string() + ": ";
  bool reused = connection_.valid();
  if (reused && idle_connection_broken(connection_.get())) reused = false;
  if (!reused) {
    if (auto s = connect(limits); !s) return make_error(what + s.error().message);
  }
  bool retry = false;
  auto response = exchange(limits, reused, retry);
  if (!response && retry) {
    if (auto s = connect(limits); !s) return make_error(what + s.error().message);
    response = exchange(limits, false, retry);
  }
  if (!response) {
    connection_.reset();
    return make_error(what + response.error().message);
  }
  return response;
}

Result<HttpResponse> HttpClient::exchange(const IoLimits& limits, bool reused, bool& retry) {
  retry = false;
  std::string request = "GET " + url_.target + " HTTP/1.1\r\nHost: " + url_.authority +
                        "\r\nUser-Agent: edgeshed\r\n";
  if (!options_.accept.empty()) request += "Accept: " + options_.accept + "\r\n";
  if (!options_.keep_alive) request += "Connection: close\r\n";
  request += "\r\n";
  const std::string peer = url_.authority;
  // A server may close a kept connection just as it is reused; that is worth
  // one more try on a new connection, if time is left.
  auto may_retry = [&](const Error& error) {
    return reused && error.message != "cancelled" &&
           std::chrono::steady_clock::now() < limits.deadline;
  };
  if (auto s = send_all(connection_.get(), request, limits, peer); !s) {
    retry = may_retry(s.error());
    return s.error();
  }

  ResponseReader reader(connection_.get(), limits, peer);
  auto head = read_head(reader);
  if (!head) {
    retry = !reader.received_any() && may_retry(head.error());
    return head.error();
  }
  HttpResponse response;
  response.status = head->status;
  response.reason = head->reason;
  response.content_type = head->content_type;
  bool keep = options_.keep_alive && !head->close && !head->http10;
  const std::size_t max = options_.max_body_bytes;
  if (head->status == 204 || head->status == 304) {
    // No body by definition.
  } else if (head->chunked) {
    if (auto s = read_chunked(reader, response.body, max); !s) return s.error();
  } else if (head->content_length) {
    if (*head->content_length > max) return make_error(ResponseReader::too_large(max));
    if (auto s = reader.exact(*head->content_length, response.body); !s) return s.error();
  } else {
    if (auto s = reader.to_eof(response.body, max); !s) return s.error();
    keep = false;
  }
  // Bytes beyond the response would be read as the start of the next one.
  if (!keep || reader.has_unread()) connection_.reset();
  return response;
}

}  // namespace edgeshed::signals
