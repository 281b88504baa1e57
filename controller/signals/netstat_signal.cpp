#include "signals/netstat_signal.h"

#include <algorithm>

#include "signals/parse/netstat.h"
#include "signals/signal_params.h"

namespace edgeshed::signals {

Result<NetstatOptions> netstat_options(const config::SignalConfig& cfg) {
  ParamReader params(cfg, {"counter", "path"});
  NetstatOptions options;
  if (auto counter = params.string("counter")) {
    bool word = !counter->empty() && std::all_of(counter->begin(), counter->end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    });
    if (word) {
      options.counter = *counter;
    } else {
      params.invalid("counter", "not a counter name (letters, digits and '_')");
    }
  }
  if (auto path = params.string("path")) {
    if (path->empty()) {
      params.invalid("path", "must not be empty");
    } else {
      options.path = *path;
    }
  }
  if (auto s = params.finish(); !s) return s.error();
  // Within a short stale_after too (it may be as short as the tick).
  options.read_interval =
      std::min<std::chrono::nanoseconds>(kNetstatReadInterval, cfg.stale_after / 2);
  return options;
}

Result<uint64_t> NetstatSignal::counter_of(std::string_view text) const {
  if (auto quick = quick_counter(text, kSection, options_.counter)) return *quick;
  auto netstat = parse_netstat(text);
  if (!netstat) return netstat.error();
  return find_counter(*netstat, kSection, options_.counter);
}

Result<Sample> NetstatSignal::sample(std::chrono::nanoseconds now) {
  if (last_ && now - last_->sample.taken < options_.read_interval) return last_->sample;
  auto text = file_.read();
  if (!text) return text.error();
  auto count = counter_of(*text);
  if (!count) return make_error(options_.path + ": " + count.error().message);

  double rate = 0.0;
  if (last_ && now > last_->sample.taken && *count >= last_->count) {
    double seconds = std::chrono::duration<double>(now - last_->sample.taken).count();
    rate = static_cast<double>(*count - last_->count) / seconds;
  }
  last_ = Reading{*count, Sample{rate, now}};
  return last_->sample;
}

Result<std::unique_ptr<NetstatSignal>> make_netstat_signal(const config::SignalConfig& cfg) {
  auto options = netstat_options(cfg);
  if (!options) return options.error();
  return std::make_unique<NetstatSignal>(std::move(*options));
}

const SignalKindDescriptor kNetstatKind = {
    .meaning =
        "increase per second of a TcpExt counter such as `ListenDrops`, which is hard evidence of "
        "accept-queue collapse (read at most every 250 ms)",
    .check = check_options<netstat_options>,
    .make = [](const config::SignalConfig& cfg,
               const DataplaneReaders& /*readers*/) { return as_source(make_netstat_signal(cfg)); },
};

}  // namespace edgeshed::signals
