#include "signals/probe_signal.h"

#include <algorithm>

#include "common/duration.h"
#include "signals/signal_params.h"

namespace edgeshed::signals {
namespace {

// A health answer is small; anything bigger is read no further.
constexpr std::size_t kMaxHealthBody = 1 << 20;

}  // namespace

Result<ProbeOptions> probe_options(const config::SignalConfig& cfg) {
  ParamReader params(cfg, {"address", "port", "http_path", "interval", "timeout", "source"});
  ProbeOptions options;
  auto port = static_cast<uint16_t>(params.integer("port", 0, 1, 65535, /*required=*/true));
  if (auto address = params.string("address", /*required=*/true)) {
    auto parsed = parse_ip_address(*address, port);
    if (parsed) {
      options.address = *parsed;
    } else {
      params.invalid("address", parsed.error().message + " (a literal: no name lookup)");
    }
  }
  if (auto source = params.string("source")) {
    auto parsed = parse_ip_address(*source, 0);
    if (!parsed) {
      params.invalid("source", parsed.error().message);
    } else if (options.address.length != 0 && parsed->family() != options.address.family()) {
      params.invalid("source", "must be of the same family as address");
    } else {
      options.source = *parsed;
    }
  }
  if (auto path = params.string("http_path")) {
    bool clean = std::none_of(path->begin(), path->end(), [](char c) {
      return static_cast<unsigned char>(c) <= ' ' || c == 0x7f;
    });
    if (path->empty() || path->front() != '/' || !clean) {
      params.invalid("http_path", "must start with '/' and have no spaces or control characters");
    } else {
      options.http_path = *path;
    }
  }
  params.periodic(options.interval, options.timeout);
  if (auto s = params.finish(); !s) return s.error();
  return options;
}

ProbeSignal::ProbeSignal(ProbeOptions options)
    : options_(std::move(options)),
      worker_(options_.interval, [this](int cancel_fd) { return probe(cancel_fd); }) {}

Result<Sample> ProbeSignal::sample(std::chrono::nanoseconds now) { return worker_.latest(now); }

std::string ProbeSignal::last_failure() const {
  std::lock_guard lock(failure_mutex_);
  return last_failure_;
}

Status ProbeSignal::connect_only(int cancel_fd) {
  auto fd = tcp_connect(options_.address, options_.source,
                        IoLimits::from_now(options_.timeout, cancel_fd));
  if (!fd) return fd.error();
  return {};
}

Status ProbeSignal::http_get(int cancel_fd) {
  if (!http_) {
    HttpUrl url;
    url.host = options_.address.ip();
    url.port = options_.address.port();
    url.target = options_.http_path;
    url.authority = options_.address.to_string();
    // A new connection each time: connecting is part of what is measured.
    http_.emplace(url, HttpClient::Options{.timeout = options_.timeout,
                                           .max_body_bytes = kMaxHealthBody,
                                           .keep_alive = false,
                                           .source = options_.source,
                                           .accept = ""});
  }
  auto response = http_->get(cancel_fd);
  if (!response) return response.error();
  if (response->status < 200 || response->status > 299) {
    return make_error("GET " + http_->url().to_string() + ": HTTP " +
                      std::to_string(response->status) + " " + response->reason);
  }
  return {};
}

Result<double> ProbeSignal::probe(int cancel_fd) {
  const auto start = std::chrono::steady_clock::now();
  Status outcome = options_.http_path.empty() ? connect_only(cancel_fd) : http_get(cancel_fd);
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  if (outcome) return took.count();
  failures_.fetch_add(1);
  {
    std::lock_guard lock(failure_mutex_);
    last_failure_ = outcome.error().message;
  }
  return std::chrono::duration<double>(options_.timeout).count();
}

Result<std::unique_ptr<ProbeSignal>> make_probe_signal(const config::SignalConfig& cfg) {
  auto options = probe_options(cfg);
  if (!options) return options.error();
  return std::make_unique<ProbeSignal>(std::move(*options));
}

const SignalKindDescriptor kProbeKind = {
    .meaning =
        "latency of a TCP connect (and optional HTTP GET) to the service. Its `source` address is "
        "made critical",
    .check = check_options<probe_options>,
    .make = [](const config::SignalConfig& cfg,
               const DataplaneReaders& /*readers*/) { return as_source(make_probe_signal(cfg)); },
};

}  // namespace edgeshed::signals
