// [[signal]] kind = "netstat": how fast a kernel TCP counter grows, per
// second, e.g. ListenDrops: SYNs and handshakes the listener dropped because
// its accept or SYN queue was full. A rising rate means the service no
// longer keeps up with its accepts, whatever it says about itself.
//
// Keys (all checked; unknown keys are errors):
//   counter = a TcpExt field of /proc/net/netstat: ListenDrops (default),
//             ListenOverflows, TCPReqQFullDrop, TCPReqQFullDoCookies, ...
//             The name is checked against the file at the first sample.
//   path    = the file to read. Default "/proc/net/netstat", which counts
//             the daemon's network namespace; /proc/<pid>/net/netstat
//             counts the namespace of process <pid>.
//
// Reading procfs takes microseconds, so this source reads in sample(), at
// most once per read_interval: the kernel formats the whole file (every
// TcpExt, IpExt and MPTcpExt counter) for each read, which was a tenth of
// the daemon's CPU at a 100 ms tick, and a drop rate needs no finer grain.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "config/config.h"
#include "signals/proc_file.h"
#include "signals/signal_kind.h"
#include "signals/signal_source.h"

namespace edgeshed::signals {

// Well within the default stale_after (1 s): a reading never goes stale
// between reads.
inline constexpr std::chrono::milliseconds kNetstatReadInterval{250};

struct NetstatOptions {
  std::string path = "/proc/net/netstat";
  std::string counter = "ListenDrops";
  // Between reads, sample() returns the last reading, taken when it was.
  std::chrono::nanoseconds read_interval = kNetstatReadInterval;
};

Result<NetstatOptions> netstat_options(const config::SignalConfig& cfg);

class NetstatSignal final : public SignalSource {
 public:
  explicit NetstatSignal(NetstatOptions options)
      : options_(std::move(options)), file_(options_.path) {}
  // The counter's increase per second since the previous read; 0 for the
  // first read and after the counter went down (a new network namespace).
  Result<Sample> sample(std::chrono::nanoseconds now) override;

 private:
  static constexpr std::string_view kSection = "TcpExt";
  // Without a table of every counter where the text is well formed; parsed
  // whole for the error where it is not.
  Result<uint64_t> counter_of(std::string_view text) const;

  NetstatOptions options_;
  ProcFile file_;
  struct Reading {
    uint64_t count;  // the counter
    Sample sample;   // the rate it gave, and its time
  };
  std::optional<Reading> last_;
};

Result<std::unique_ptr<NetstatSignal>> make_netstat_signal(const config::SignalConfig& cfg);

// [[signal]] kind = "netstat": the keys above.
extern const SignalKindDescriptor kNetstatKind;

}  // namespace edgeshed::signals
