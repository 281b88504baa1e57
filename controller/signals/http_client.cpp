#include "signals/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <memory>
#include <optional>

#include "common/duration.h"

namespace edgeshed::signals {
namespace {

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

template <class T>
bool parse_number(std::string_view text, T& out, int base = 10) {
  if (text.empty()) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out, base);
  return ec == std::errc() && end == text.data() + text.size();
}

struct EasyDeleter {
  void operator()(CURL* easy) const { curl_easy_cleanup(easy); }
};
struct MultiDeleter {
  void operator()(CURLM* multi) const { curl_multi_cleanup(multi); }
};
struct UrlDeleter {
  void operator()(CURLU* url) const { curl_url_cleanup(url); }
};
struct ListDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};

// Once per process, whichever signal's worker thread gets there first: a
// function-local static is initialised once even when threads race, and
// curl_global_init itself is only thread-safe in builds since 7.84. Never
// cleaned up: workers of other signals may still be running at exit.
Status global_init() {
  static const CURLcode rc = curl_global_init(CURL_GLOBAL_DEFAULT);
  if (rc != CURLE_OK) return make_error(std::string("curl_global_init: ") + curl_easy_strerror(rc));
  return {};
}

std::string too_large(std::size_t max) {
  return "response body larger than the limit of " + std::to_string(max) + " bytes";
}

}  // namespace

Result<HttpUrl> parse_http_url(std::string_view url) {
  const std::string quoted = "'" + std::string(url) + "'";
  std::unique_ptr<CURLU, UrlDeleter> handle(curl_url());
  if (!handle) return make_error(quoted + ": out of memory");
  // Any scheme: a wrong one is named below, in words of our own.
  const CURLUcode rc =
      curl_url_set(handle.get(), CURLUPART_URL, std::string(url).c_str(), CURLU_NON_SUPPORT_SCHEME);
  if (rc == CURLUE_BAD_SCHEME || rc == CURLUE_BAD_SLASHES) {
    return make_error(quoted + ": must start with http://");
  }
  if (rc != CURLUE_OK) return make_error(quoted + ": " + curl_url_strerror(rc));
  auto part = [&](CURLUPart which) -> std::optional<std::string> {
    char* text = nullptr;
    if (curl_url_get(handle.get(), which, &text, 0) != CURLUE_OK || text == nullptr) {
      return std::nullopt;
    }
    std::string out(text);
    curl_free(text);
    return out;
  };
  const std::string scheme = part(CURLUPART_SCHEME).value_or("");  // lower case
  if (scheme == "https") {
    return make_error(quoted + ": https is not supported; use a plain http endpoint");
  }
  if (scheme != "http") return make_error(quoted + ": must start with http://");
  if (part(CURLUPART_USER) || part(CURLUPART_PASSWORD)) {
    return make_error(quoted + ": user info (user@host) is not supported");
  }
  HttpUrl out;
  out.host = part(CURLUPART_HOST).value_or("");
  if (out.host.size() > 2 && out.host.front() == '[')
    out.host = out.host.substr(1, out.host.size() - 2);
  if (out.host.empty()) return make_error(quoted + ": no host");
  if (auto port_text = part(CURLUPART_PORT)) {
    unsigned port = 0;
    if (!parse_number(*port_text, port) || port == 0 || port > 65535) {
      return make_error(quoted + ": port '" + *port_text + "' is not 1-65535");
    }
    out.port = static_cast<uint16_t>(port);
  }
  // The fragment is the client's own: never sent.
  out.target = part(CURLUPART_PATH).value_or("/");
  if (auto query = part(CURLUPART_QUERY)) out.target += "?" + *query;
  bool v6 = out.host.find(':') != std::string::npos;
  out.authority = (v6 ? "[" + out.host + "]" : out.host) + ":" + std::to_string(out.port);
  return out;
}

struct HttpClient::Handles {
  // The multi handle owns the connection kept between requests; the easy
  // one is added to it for each exchange. Declared first, destroyed last.
  std::unique_ptr<CURLM, MultiDeleter> multi;
  std::unique_ptr<CURL, EasyDeleter> easy;
  std::unique_ptr<curl_slist, ListDeleter> headers;
  char error[CURL_ERROR_SIZE] = {};
};

// What the callbacks of one exchange fill in.
struct HttpClient::Exchange {
  std::size_t max_body = 0;
  HttpResponse response;
  bool answered = false;              // a status line arrived
  std::optional<std::string> length;  // the Content-Length header's value
  std::optional<Error> refused;       // why a callback stopped the transfer

  // One header line, status lines included, CRLF and all.
  static std::size_t on_header(char* data, std::size_t size, std::size_t n, void* self) {
    auto& ex = *static_cast<Exchange*>(self);
    std::string_view line(data, size * n);
    while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.remove_suffix(1);
    if (line.starts_with("HTTP/")) {
      // Interim responses (100 Continue, 103 Early Hints) come before the
      // real one, whose headers replace theirs.
      ex.response = HttpResponse{};
      ex.length.reset();
      ex.answered = true;
      // Asked for no upgrade, libcurl would wait for a response after it.
      if (line.substr(line.find(' ') + 1, 4) == "101 ") {
        ex.refused = make_error("server switched protocols (101)");
        return 0;
      }
      std::size_t reason = line.find(' ', line.find(' ') + 1);
      if (reason != std::string_view::npos) ex.response.reason = trim(line.substr(reason + 1));
      return size * n;
    }
    std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) return size * n;
    const std::string name = lower(line.substr(0, colon));
    const std::string value(trim(line.substr(colon + 1)));
    // Left to libcurl, these would hand the text parser bytes it cannot read
    // (no Accept-Encoding is sent, so nothing asked for them).
    if (name == "content-encoding" && lower(value) != "identity") {
      ex.refused =
          make_error("compressed response (Content-Encoding: " + value + ") is not supported");
      return 0;
    }
    if (name == "transfer-encoding" && lower(value) != "chunked") {
      ex.refused = make_error("unsupported Transfer-Encoding '" + value + "'");
      return 0;
    }
    // libcurl 7.88 takes the last of two that differ; which is right is
    // not knowable.
    if (name == "content-length" && ex.length && *ex.length != value) {
      ex.refused = make_error("bad Content-Length '" + value + "'");
      return 0;
    }
    if (name == "content-length") ex.length = value;
    if (name == "content-type") ex.response.content_type = value;
    return size * n;
  }

  // Body bytes, de-chunked. The cap holds however the body is framed:
  // CURLOPT_MAXFILESIZE only sees a Content-Length.
  static std::size_t on_body(char* data, std::size_t size, std::size_t n, void* self) {
    auto& ex = *static_cast<Exchange*>(self);
    if (ex.response.body.size() + size * n > ex.max_body) {
      ex.refused = make_error(too_large(ex.max_body));
      return 0;
    }
    ex.response.body.append(data, size * n);
    return size * n;
  }
};

HttpClient::HttpClient(HttpUrl url, Options options)
    : url_(std::move(url)), options_(std::move(options)) {}
HttpClient::~HttpClient() = default;
HttpClient::HttpClient(HttpClient&&) noexcept = default;
HttpClient& HttpClient::operator=(HttpClient&&) noexcept = default;

Status HttpClient::setup() {
  if (auto s = global_init(); !s) return s;
  auto h = std::make_unique<Handles>();
  h->multi.reset(curl_multi_init());
  h->easy.reset(curl_easy_init());
  if (!h->multi || !h->easy) return make_error("libcurl could not make a handle");
  // An empty "Accept:" removes libcurl's default "Accept: */*".
  const std::string accept = "Accept:" + (options_.accept.empty() ? "" : " " + options_.accept);
  h->headers.reset(curl_slist_append(nullptr, accept.c_str()));
  if (h->headers && !options_.keep_alive &&
      curl_slist_append(h->headers.get(), "Connection: close") == nullptr) {
    h->headers.reset();
  }
  if (!h->headers) return make_error("libcurl could not make a header list");
  CURL* easy = h->easy.get();
  CURLcode rc = CURLE_OK;
  auto set = [&](CURLoption option, auto value) {
    if (rc == CURLE_OK) rc = curl_easy_setopt(easy, option, value);
  };
  const std::string url = url_.to_string();
  set(CURLOPT_URL, url.c_str());  // copied by libcurl, as every string option is
  set(CURLOPT_PROTOCOLS_STR, "http");
  set(CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_1_1));
  set(CURLOPT_PATH_AS_IS, 1L);  // the path as configured, dot segments and all
  // The endpoint is local: a proxy from the environment (http_proxy) must
  // not carry the scrape elsewhere.
  set(CURLOPT_PROXY, "");
  set(CURLOPT_NOPROXY, "*");
  // The workers are threads of the daemon, whose signals are its own.
  set(CURLOPT_NOSIGNAL, 1L);
  // A cancelled name lookup leaves its resolver thread to finish alone
  // rather than waiting for it (up to the resolver's own timeouts).
  set(CURLOPT_QUICK_EXIT, 1L);
  // 0 would mean no deadline at all.
  const auto timeout = std::chrono::ceil<std::chrono::milliseconds>(options_.timeout).count();
  set(CURLOPT_TIMEOUT_MS, static_cast<long>(std::max<decltype(timeout)>(timeout, 1)));
  set(CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(options_.max_body_bytes));
  // Each new connection resolves the name again, as a service that moved
  // would need; a kept connection does not resolve at all.
  set(CURLOPT_DNS_CACHE_TIMEOUT, 0L);
  set(CURLOPT_USERAGENT, "edgeshed");
  set(CURLOPT_HTTPHEADER, h->headers.get());
  set(CURLOPT_HEADERFUNCTION, &Exchange::on_header);
  set(CURLOPT_WRITEFUNCTION, &Exchange::on_body);
  set(CURLOPT_ERRORBUFFER, h->error);
  if (!options_.keep_alive) {
    set(CURLOPT_FRESH_CONNECT, 1L);
    set(CURLOPT_FORBID_REUSE, 1L);
  }
  if (options_.source) {
    // "host!": an address, never taken for an interface name.
    const std::string source = "host!" + options_.source->ip();
    set(CURLOPT_INTERFACE, source.c_str());
    if (options_.source->port() != 0) {
      set(CURLOPT_LOCALPORT, static_cast<long>(options_.source->port()));
    }
  }
  if (rc != CURLE_OK) return make_error(std::string("libcurl: ") + curl_easy_strerror(rc));
  handles_ = std::move(h);
  return {};
}

Result<HttpResponse> HttpClient::get(int cancel_fd) {
  const std::string what = "GET " + url_.to_string() + ": ";
  if (!handles_) {
    if (auto s = setup(); !s) return make_error(what + s.error().message);
  }
  Exchange exchange;
  exchange.max_body = options_.max_body_bytes;
  if (auto s = perform(exchange, cancel_fd); !s) return make_error(what + s.error().message);
  return std::move(exchange.response);
}

Status HttpClient::perform(Exchange& exchange, int cancel_fd) {
  CURL* easy = handles_->easy.get();
  CURLM* multi = handles_->multi.get();
  curl_easy_setopt(easy, CURLOPT_HEADERDATA, &exchange);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, &exchange);
  handles_->error[0] = '\0';
  if (CURLMcode m = curl_multi_add_handle(multi, easy); m != CURLM_OK) {
    return make_error(std::string("libcurl: ") + curl_multi_strerror(m));
  }
  // On every way out, cancelled too: the connections it opened counted, and
  // the handle out of the multi (a transfer cut short closes its connection).
  struct Detach {
    CURLM* multi;
    CURL* easy;
    uint64_t& opened;
    ~Detach() {
      long connects = 0;
      curl_easy_getinfo(easy, CURLINFO_NUM_CONNECTS, &connects);
      opened += static_cast<uint64_t>(connects);
      curl_multi_remove_handle(multi, easy);
    }
  } detach{multi, easy, connections_opened_};

  // The multi interface rather than curl_easy_perform: its poll takes the
  // cancel fd beside curl's sockets, where the easy one could only look at
  // it from the progress callback, called as seldom as once a second.
  for (;;) {
    int running = 0;
    CURLMcode m = curl_multi_perform(multi, &running);
    if (m == CURLM_OK && running == 0) break;
    curl_waitfd cancel{cancel_fd, CURL_WAIT_POLLIN, 0};
    // The wait also ends at curl's own timers, the deadline among them.
    if (m == CURLM_OK) m = curl_multi_poll(multi, &cancel, cancel_fd >= 0 ? 1 : 0, 1000, nullptr);
    if (m != CURLM_OK) return make_error(std::string("libcurl: ") + curl_multi_strerror(m));
    if (cancel.revents != 0) return make_error("cancelled");
  }
  int queued = 0;
  const CURLMsg* done = curl_multi_info_read(multi, &queued);
  const CURLcode result =
      done != nullptr && done->msg == CURLMSG_DONE ? done->data.result : CURLE_RECV_ERROR;

  if (exchange.refused) return *exchange.refused;
  const std::string curl_says =
      handles_->error[0] != '\0' ? handles_->error : curl_easy_strerror(result);
  switch (result) {
    case CURLE_OK:
      break;
    case CURLE_OPERATION_TIMEDOUT: {
      curl_off_t connected = 0;
      curl_easy_getinfo(easy, CURLINFO_CONNECT_TIME_T, &connected);
      const std::string doing = connected == 0       ? "connecting to "
                                : !exchange.answered ? "waiting for the response from "
                                                     : "reading the response from ";
      return make_error("timed out after " + format_duration(options_.timeout) + " " + doing +
                        url_.authority);
    }
    case CURLE_FILESIZE_EXCEEDED:
      return make_error(too_large(options_.max_body_bytes));
    case CURLE_UNSUPPORTED_PROTOCOL:  // e.g. "Received HTTP/0.9 when not allowed"
    case CURLE_WEIRD_SERVER_REPLY:    // e.g. "Header without colon"
      return make_error("not a valid HTTP/1.x response: " + curl_says);
    default: {
      long os_error = 0;
      curl_easy_getinfo(easy, CURLINFO_OS_ERRNO, &os_error);
      // libcurl words a refused connection as "Couldn't connect to server";
      // some of its other messages already name the error.
      const std::string os_says = os_error != 0 ? std::strerror(static_cast<int>(os_error)) : "";
      if (os_says.empty() || curl_says.find(os_says) != std::string::npos) {
        return make_error(curl_says);
      }
      return make_error(curl_says + " (" + os_says + ")");
    }
  }
  long status = 0;
  curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
  exchange.response.status = static_cast<int>(status);
  return {};
}

}  // namespace edgeshed::signals
