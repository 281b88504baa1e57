// [[signal]] kind = "probe": the latency of an active probe of the service,
// as a client would see it, in seconds.
//
// Every interval, a TCP connect to address:port and, with http_path, a GET
// of that path on a new connection; the value is the time the whole probe
// took. A failed probe (refused, reset, timed out, a non-2xx answer) counts
// as maximally slow: its value is the timeout. Failures are counted for
// status.
//
// Keys (all checked; unknown keys are errors):
//   address   = IPv4 or IPv6 literal of the service. Required.
//   port      = 1..65535. Required.
//   http_path = "/health": also GET this path and require a 2xx answer.
//               Default: connect only.
//   interval  = time between probes. Default "1s", 10ms..1h.
//   timeout   = limit on one probe. Default "1s" (or interval, if shorter),
//               at most interval.
//   source    = local IPv4 or IPv6 literal to bind the probe's sockets to,
//               of the same family as address. The data plane must classify
//               the probe's own SYNs as critical, or shedding would make the
//               probe fail and the level climb further; giving the probe a
//               source address of its own lets that address be listed as a
//               critical [[prefix]]. Default: the kernel picks.
// stale_after must be at least interval + timeout.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "common/result.h"
#include "config/config.h"
#include "signals/http_client.h"
#include "signals/net_io.h"
#include "signals/periodic_worker.h"
#include "signals/signal_kind.h"
#include "signals/signal_source.h"

namespace edgeshed::signals {

struct ProbeOptions {
  SocketAddress address;
  std::optional<SocketAddress> source;
  std::string http_path;  // empty: connect only
  std::chrono::nanoseconds interval = std::chrono::seconds(1);
  std::chrono::nanoseconds timeout = std::chrono::seconds(1);
};

// The options of a kind = "probe" signal, or every error in its keys.
Result<ProbeOptions> probe_options(const config::SignalConfig& cfg);

class ProbeSignal final : public SignalSource {
 public:
  explicit ProbeSignal(ProbeOptions options);
  Result<Sample> sample(std::chrono::nanoseconds now) override;

  // For status: probes completed, how many failed, and why the last did.
  uint64_t probes() const { return worker_.rounds(); }
  uint64_t failures() const { return failures_.load(); }
  std::string last_failure() const;

 private:
  Result<double> probe(int cancel_fd);  // on the worker thread
  Status connect_only(int cancel_fd);
  Status http_get(int cancel_fd);

  const ProbeOptions options_;
  std::optional<HttpClient> http_;  // with http_path; worker thread only
  std::atomic<uint64_t> failures_{0};
  mutable std::mutex failure_mutex_;
  std::string last_failure_;
  PeriodicWorker worker_;  // last: stopped before the members it uses go
};

Result<std::unique_ptr<ProbeSignal>> make_probe_signal(const config::SignalConfig& cfg);

// [[signal]] kind = "probe": the keys above.
extern const SignalKindDescriptor kProbeKind;

}  // namespace edgeshed::signals
