#include "signals/dataplane_rate_signal.h"

#include <optional>

#include "common/names.h"
#include "common/stats.h"
#include "law/types.h"
#include "signals/dataplane_readers.h"
#include "signals/signal_params.h"

namespace edgeshed::signals {

namespace {

uint64_t row_total(const ClassCounters& k, DataplaneRateSignal::Counter counter) {
  using Counter = DataplaneRateSignal::Counter;
  switch (counter) {
    case Counter::kSyn:
      // Every new connection to a protected port ends in exactly one of these.
      return k[EDGESHED_CTR_ADMITTED] + class_sheds(k) + class_would_sheds(k) +
             k[EDGESHED_CTR_FAIL_OPEN] + k[EDGESHED_CTR_PASS_MODE_OFF];
    case Counter::kAdmitted:
      return k[EDGESHED_CTR_ADMITTED];
    case Counter::kShed:
      return class_sheds(k);
    case Counter::kWouldShed:
      return class_would_sheds(k);
  }
  return 0;
}

}  // namespace

// TCP and QUIC alike: both are new connections.
uint64_t DataplaneRateSignal::total(const edgeshed_stats& stats, Counter counter,
                                    std::optional<uint32_t> class_id) {
  uint64_t sum = 0;
  for (uint32_t proto = 0; proto < EDGESHED_NUM_PROTOCOLS; ++proto) {
    for (uint32_t c = 0; c < EDGESHED_NUM_CLASSES; ++c) {
      if (!class_id || *class_id == c) sum += row_total(class_row(stats, proto, c), counter);
    }
  }
  return sum;
}

Result<Sample> DataplaneRateSignal::sample(std::chrono::nanoseconds now) {
  auto stats = read_();
  if (!stats) return stats.error();
  const uint64_t count = total(*stats, counter_, class_id_);
  double rate = 0;
  if (prev_ && now > prev_at_ && count >= *prev_) {
    rate =
        static_cast<double>(count - *prev_) * 1e9 / static_cast<double>((now - prev_at_).count());
  }
  prev_ = count;
  prev_at_ = now;
  return Sample{rate, now};
}

namespace {

using Counter = DataplaneRateSignal::Counter;
// The verdicts' names (names::kVerdicts) and "syn", every new connection.
constexpr Choices<Counter, 4> kCounters = {{
    {"syn", Counter::kSyn},
    {names::name_of(names::Verdict::kAdmitted), Counter::kAdmitted},
    {names::name_of(names::Verdict::kShed), Counter::kShed},
    {names::name_of(names::Verdict::kWouldShed), Counter::kWouldShed},
}};

// [[signal]] kind = "dataplane": counter = "syn" (default) | "admitted" |
// "shed" | "would_shed", per second; class = one class (default: all).
MadeSource make_dataplane_rate(const config::SignalConfig& cfg, const DataplaneReaders& readers) {
  ParamReader p(cfg, {"counter", "class"});
  const Counter c = p.choice("counter", kCounters, std::optional(Counter::kSyn));
  std::optional<uint32_t> class_id;
  if (auto name = p.string("class")) {
    auto parsed = names::parse<law::TrafficClass>(*name);
    if (parsed) {
      class_id = static_cast<uint32_t>(*parsed);
    } else {
      p.invalid("class", parsed.error().message);
    }
  }
  if (auto s = p.finish(); !s) return s.error();
  return std::unique_ptr<SignalSource>(
      std::make_unique<DataplaneRateSignal>(readers.stats, c, class_id));
}

}  // namespace

const SignalKindDescriptor kDataplaneRateKind = {
    .meaning = "SYNs, admissions or sheds per second, from the data plane's counters",
    .check = check_by_making<make_dataplane_rate>,
    .make = make_dataplane_rate,
};

}  // namespace edgeshed::signals
