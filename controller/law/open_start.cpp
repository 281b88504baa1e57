#include "law/open_start.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace edgeshed::law {

namespace {
// Step 0: a queue shows as latency and in-flight both this factor over the
// lowest latency remembered (and the in-flight then, plus kQueueSlack).
constexpr double kQueueRise = 1.5;
constexpr uint32_t kQueueSlack = 2;
constexpr double kQueueDeviations = 2.0;
constexpr int kQueueTicks = 2;
// Step 0: a queue holds at least this many times the in-flight Little's law
// gives the throughput at the lowest latency (a burst of a load under
// capacity measured at most 2.4x in tests/unit/law_capacity_test.cpp).
constexpr double kQueueDepth = 3.0;
// Step 0: the share of Little's law's wait for the added in-flight that the
// latency must show: the window lags a fast-growing queue (a 5x overload
// after half load showed 0.08 on its first tick, cold starts into 1.6x 0.55
// to 0.6); 200 long polls beside instant answers show 0.0002.
constexpr double kQueueExplained = 0.05;
// Step 0: counting noise of a rate over kRateWindow.
constexpr double kRateSlack = 1.1;
constexpr std::chrono::nanoseconds kQueueMemory = std::chrono::seconds(2);
constexpr double kQueueMemoryLatencies = 5.0;
// Step 0: throughput over the latency signal's own window.
constexpr std::chrono::nanoseconds kRateWindow = std::chrono::milliseconds(500);
constexpr std::chrono::nanoseconds kMaxRateWindow = std::chrono::seconds(10);
// Step 0: a tick's reading counts with this many completions in kRateWindow
// (a latency and a rate of a few responses are noise; a service ramping up
// completes its shortest requests first).
constexpr uint64_t kReadingCompletions = 20;
// Step 0: on evidence the limit starts at most this many times `initial`:
// where a backlog was there before the law, its lowest latency is the
// backlog's and Little's law would admit it all.
constexpr double kMaxStartFactor = 4.0;
// Knowledge: what step 0 keeps of healthy ticks, and the least it trusts.
constexpr std::chrono::nanoseconds kLearnMemory = std::chrono::minutes(5);
constexpr std::size_t kMaxLearnt = 4096;
constexpr std::size_t kMinLearnt = 50;
// For the start on proof, fewer of this run's healthy ticks will do: they
// end just before the queue, on the same service (the bench's capacity step
// proves its queue 4 s after the daemon started, 40 ticks).
constexpr std::size_t kMinStartLearnt = 10;
// The healthy p99, and the floor the heavy-tail rule compares it with, from
// the run's first healthy ticks already: a heavy tail's first second is
// where the proof misread it (netns.test_heavy_tail refused 15 of 3,000 in
// one run of a cold start when it waited for kMinStartLearnt).
constexpr std::size_t kMinTailLearnt = 3;
// The floor is a low quantile of the ticks' latencies: their minimum sinks
// with noise, their median carries the queueing of a busy service.
constexpr double kFloorQuantile = 0.25;
// A warm start's floor and this run's tick agree within this factor.
constexpr double kWarmAgreement = 1.5;
// A heavy tail: the healthy p99 this many times the floor (a low quantile of
// the healthy p90s). Fixed service times give about 1, exponential ones 2.2;
// 90% at 5 ms and 10% at 100 ms gives 14. Its p90 window wanders up to the
// long requests now and then, a queue's goes on past them: there, a tick's
// latency is evidence only kTailRise over the healthy p99. Elsewhere that
// would only delay the proof (an exponential service of 200 slots x 1 s by
// seconds).
constexpr double kHeavyTail = 3.0;
constexpr double kTailRise = 1.25;
// A warm start's strong prior (issue #49, point 4): ticks kPriorLatency
// times over its floor and over its p99, completing at least its rate, with
// kPriorInflight times what Little's law keeps in service at that rate and
// the learnt floor, kPriorTicks in a row. That is the learnt service queued
// (a pool that saturates it from the restart grows no queue to prove), or
// another service, slower and busier: the proof takes the knowledge on
// trial, and the limit checks it (CapacityLimit's trial).
constexpr double kPriorLatency = 2.0;
constexpr double kPriorInflight = 2.0;
// On this many ticks in a row: a pool holds its in-flight, a busy healthy
// service reaches it in a burst (20 ms learnt, 30 ms now at 0.9x: two ticks
// in a row, and its trial shed 73).
constexpr int kPriorTicks = 5;

double quantile(std::vector<double> values, double q) {
  const auto nth = values.begin() + static_cast<std::ptrdiff_t>(q * (values.size() - 1));
  std::nth_element(values.begin(), nth, values.end());
  return *nth;
}
}  // namespace

void OpenStart::warm_start(const Knowledge& knowledge) {
  if (!(knowledge.floor_seconds > 0.0) || !std::isfinite(knowledge.floor_seconds) ||
      !(knowledge.rate > 0.0)) {
    return;
  }
  warm_ = knowledge;
}

double OpenStart::learnt_floor() const {
  std::vector<double> latencies;
  latencies.reserve(learnt_.size());
  for (const Reading& r : learnt_) latencies.push_back(r.latency);
  return quantile(std::move(latencies), kFloorQuantile);
}

std::optional<double> OpenStart::tail() const {
  std::vector<double> tails;
  tails.reserve(learnt_.size());
  for (const Reading& r : learnt_) {
    if (r.tail && std::isfinite(*r.tail) && *r.tail > 0.0) tails.push_back(*r.tail);
  }
  if (tails.size() >= kMinTailLearnt) return quantile(std::move(tails), 0.5);
  if (warm_placed_ && warm_->tail_seconds > 0.0) return warm_->tail_seconds;
  return std::nullopt;
}

std::optional<double> OpenStart::start_floor() const {
  if (learnt_.size() < kMinLearnt && warm_placed_) return warm_->floor_seconds;
  if (learnt_.size() < kMinStartLearnt) return std::nullopt;
  return learnt_floor();
}

std::optional<Knowledge> OpenStart::knowledge() const {
  if (learnt_.size() < kMinLearnt) return warm_placed_ ? warm_ : std::nullopt;
  std::vector<double> inflight;
  std::vector<double> rates;
  inflight.reserve(learnt_.size());
  rates.reserve(learnt_.size());
  for (const Reading& r : learnt_) {
    inflight.push_back(r.inflight);
    rates.push_back(r.rate.value_or(0.0));
  }
  Knowledge k;
  k.floor_seconds = learnt_floor();
  k.inflight = static_cast<uint32_t>(std::lround(quantile(std::move(inflight), 0.5)));
  k.rate = quantile(std::move(rates), 0.5);
  k.peak_inflight = healthy_peak();
  k.readings = readings();
  k.tail_seconds = tail().value_or(0.0);
  return k;
}

uint32_t OpenStart::healthy_peak() const {
  uint32_t peak = warm_placed_ ? warm_->peak_inflight : 0;
  for (const Reading& r : learnt_) peak = std::max(peak, r.inflight);
  return peak;
}

uint64_t OpenStart::readings() const {
  return learnt_readings_ + (warm_placed_ ? warm_->readings : 0);
}

std::optional<double> OpenStart::rate(const LimitSample& sample) {
  if (!sample.completions || sample.interval.count() <= 0) return std::nullopt;
  completions_.push_back({sample.now, *sample.completions, sample.latency_seconds});
  // Ticks before the first completion are before the traffic: counted, they
  // would make a load that starts after a quiet spell look like a ramp-up.
  // A slow service completes fewer than kReadingCompletions in kRateWindow
  // (10 x 2 s: 5 a second): its window stretches until it holds that many,
  // up to kMaxRateWindow, or its queue would never be proven.
  uint64_t completed = 0;
  for (const auto& tick : completions_) completed += tick.count;
  while (!completions_.empty()) {
    const auto& [at, count, latency] = completions_.front();
    const auto age = sample.now - at;
    const bool stale =
        age >= kMaxRateWindow || (age >= kRateWindow && completed - count >= kReadingCompletions);
    if (count != 0 && !stale) break;
    completed -= count;
    completions_.pop_front();
  }
  if (completed < kReadingCompletions) return std::nullopt;
  const auto covered = sample.now - completions_.front().at + sample.interval;
  return static_cast<double>(completed) / std::chrono::duration<double>(covered).count();
}

std::optional<double> OpenStart::stretched_latency(const LimitSample& sample) const {
  if (completions_.empty() || sample.now - completions_.front().at < kRateWindow) {
    return std::nullopt;
  }
  double sum = 0.0;
  uint64_t weight = 0;
  for (const auto& tick : completions_) {
    if (!tick.latency || !std::isfinite(*tick.latency) || tick.count == 0) continue;
    sum += *tick.latency * static_cast<double>(tick.count);
    weight += tick.count;
  }
  if (weight == 0) return std::nullopt;
  return sum / static_cast<double>(weight);
}

std::optional<double> OpenStart::saturated_rate() const {
  if (queue_ticks_ < kQueueTicks || completions_.size() < kQueueTicks + 1) {
    return std::nullopt;
  }
  // The completions of the last kQueueTicks ticks, over the time since the
  // tick before them.
  const auto end = completions_.end();
  uint64_t completed = 0;
  for (auto it = end - kQueueTicks; it != end; ++it) completed += it->count;
  const auto covered = (end - 1)->at - (end - kQueueTicks - 1)->at;
  if (covered.count() <= 0 || completed < kReadingCompletions) return std::nullopt;
  return static_cast<double>(completed) / std::chrono::duration<double>(covered).count();
}

std::optional<double> OpenStart::prove(const LimitSample& sample) {
  const uint32_t inflight = std::max(sample.inflight, sample.peak_inflight);
  // Shedding at max: the limit binds already, whatever the latency says.
  bool queue = sample.sheds > 0 && inflight >= config_.max;
  // The queue gate saw it in the requests still in service, against an age
  // learnt from this service's own p99.
  const std::optional<double> healthy_tail = tail();
  const std::optional<double> healthy_floor =
      learnt_.size() >= kMinTailLearnt ? std::optional<double>(learnt_floor()) : start_floor();
  const double tail_rise =
      healthy_tail && healthy_floor && *healthy_tail > kHeavyTail * *healthy_floor
          ? *healthy_tail * kTailRise
          : 0.0;
  const bool gated = sample.queue_seen && healthy_tail;
  queue = queue || gated;
  const std::optional<double> rate = this->rate(sample);
  const bool measured = sample.latency_seconds && std::isfinite(*sample.latency_seconds) &&
                        *sample.latency_seconds > 0.0 && (!sample.completions || rate.has_value());
  std::optional<Reading> lowest;
  // Two ticks of evidence are two ticks in a row: one without a reading
  // between them breaks the row.
  if (!measured) queue_ticks_ = 0;
  if (measured) {
    const std::optional<double> slow_latency = stretched_latency(sample);
    const bool stretched = slow_latency.has_value();
    const double latency = slow_latency.value_or(*sample.latency_seconds);
    // Knowledge of another service, or of this one before a change, must not
    // make a healthy service look queued: it counts once a tick of this run
    // agrees with its floor.
    bool strong_prior = false;
    // Only before this run learnt a floor of its own: after that, knowledge
    // of an earlier run is no prior (a service 1.5x slower since, at 0.9x,
    // had such ticks 28 s in, when this run's floor said it was healthy).
    if (warm_ && !warm_placed_ && !warm_refuted_ && rate && learnt_.size() < kMinStartLearnt) {
      const bool agrees = latency < warm_->floor_seconds * kWarmAgreement &&
                          latency * kWarmAgreement > warm_->floor_seconds;
      // Little's law: what this throughput keeps in service at the learnt
      // floor (the learnt in-flight is a median of ticks' peaks).
      const double floor_inflight = *rate * warm_->floor_seconds;
      strong_prior = latency >= kPriorLatency * warm_->floor_seconds &&
                     latency >= warm_->tail_seconds && *rate >= warm_->rate &&
                     inflight >= kPriorInflight * std::max(1.0, floor_inflight);
      prior_ticks_ = strong_prior ? prior_ticks_ + 1 : 0;
      if (agrees || prior_ticks_ >= kPriorTicks) {
        const std::optional<double> warm_tail =
            warm_->tail_seconds > 0.0 ? std::optional<double>(warm_->tail_seconds) : std::nullopt;
        readings_.push_back(
            {sample.now, warm_->floor_seconds, warm_->inflight, warm_->rate, true, warm_tail});
        warm_placed_ = true;
        on_trial_ = !agrees;
        queue = queue || on_trial_;
      }
    }
    const auto memory = std::max<std::chrono::nanoseconds>(
        kQueueMemory, std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::duration<double>(kQueueMemoryLatencies * latency)));
    while (!readings_.empty() && sample.now - readings_.front().at > memory) {
      readings_.pop_front();
    }
    const auto it =
        std::min_element(readings_.begin(), readings_.end(),
                         [](const Reading& a, const Reading& b) { return a.latency < b.latency; });
    if (it != readings_.end()) lowest = *it;
    // A queue: the latency and the requests in service rose together (by
    // more than Poisson noise: in-flight counts arrivals), and, where
    // completions are counted, throughput did not rise with them (a service
    // ramping up completes more as it carries more) and the queue is deep
    // against what Little's law gives that throughput at the lowest latency.
    bool rising = false;
    if (lowest) {
      const double noise = std::max<double>(kQueueSlack, kQueueDeviations * std::sqrt(inflight));
      rising = latency > lowest->latency * kQueueRise && latency > tail_rise &&
               (inflight > lowest->inflight * kQueueRise + noise || inflight >= config_.max);
      if (rising && rate && lowest->rate) {
        const double more_inflight =
            inflight / std::max(1.0, static_cast<double>(lowest->inflight));
        // Queued, the requests added since wait about added / rate each
        // (Little's law on the queue), of which the lagging window shows a
        // share. Requests held on purpose (long polls) add in-flight, not
        // the others' latency: sub-millisecond stream answers rising from
        // 0.4 to 0.7 ms beside 200 polls are no queue.
        const double added = inflight - static_cast<double>(lowest->inflight);
        rising = *rate <= *lowest->rate * (1.0 + (more_inflight - 1.0) / 2.0) * kRateSlack &&
                 inflight > kQueueDepth * *rate * lowest->latency &&
                 latency - lowest->latency >= kQueueExplained * added / *rate;
      }
    }
    if (!rising) {
      readings_.push_back(
          {sample.now, latency, inflight, rate, false, sample.tail_latency_seconds});
      // A tick of the prior is no healthy tick to learn from.
      if (rate && !strong_prior) learn(readings_.back());
    }
    // An overload grows without end; a burst of a load under capacity does
    // not: the evidence must hold on kQueueTicks ticks in a row, in-flight
    // not falling.
    queue_ticks_ =
        rising && (queue_ticks_ == 0 || inflight >= last_inflight_) ? queue_ticks_ + 1 : 0;
    last_inflight_ = inflight;
    if (!stretched) {
      slow_evidence_.reset();
      queue = queue || queue_ticks_ >= kQueueTicks;
    } else if (!rising) {
      slow_evidence_.reset();
    } else if (!slow_evidence_) {
      slow_evidence_ = std::make_pair(sample.now, inflight);
    } else {
      // A slow service's in-flight and latency wander for seconds at 0.9x
      // (10 x 2 s exponential: 14 shed when two ticks in a row were enough),
      // and its ticks without a response are many: the evidence must hold
      // on every reading for one no-queue latency, in-flight not fallen.
      queue = queue || (inflight >= slow_evidence_->second &&
                        std::chrono::duration<double>(sample.now - slow_evidence_->first).count() >=
                            lowest->latency);
    }
  }
  if (!queue) return std::nullopt;
  // Little's law at saturation: the concurrency that completes what the
  // service completes now, at the latency it had before the queue. Where
  // there was no such latency (a backlog before the law), `initial`; where
  // that latency is of the last seconds only, it may be a backlog's, and the
  // start stays within [initial, kMaxStartFactor x initial]. A floor learnt
  // over minutes of healthy ticks (this run's, or a warm start's that a tick
  // agreed with) is no backlog's: Little's law needs no upper bound, and a
  // service of 200 slots starts near 200, not at 80.
  // The ticks of the memory before the evidence were the queue growing.
  while (!learnt_.empty() && sample.now - learnt_.back().at < kQueueMemory) learnt_.pop_back();
  const std::optional<double> floor = start_floor();
  double estimate = config_.initial;
  if (rate && floor) {
    // The rate of the ticks that proved it: the window may still hold ticks
    // from before the overload (at 0.5x before a 2x overload, 7 for 10 slots).
    estimate = saturated_rate().value_or(*rate) * *floor;
  } else if (rate && lowest) {
    estimate = std::clamp<double>(*rate * lowest->latency, config_.initial,
                                  kMaxStartFactor * config_.initial);
  }
  // The gate sees a queue within a few service times, while the rate window
  // still holds the ticks before it: never under what the service carried
  // healthy (the gate goes on holding the queue meanwhile).
  if (gated) estimate = std::max<double>(estimate, healthy_peak());
  readings_.clear();
  completions_.clear();
  return std::clamp<double>(estimate, config_.min, config_.max);
}

void OpenStart::refute_warm_start() {
  warm_placed_ = false;
  warm_refuted_ = true;
  on_trial_ = false;
  prior_ticks_ = 0;
  queue_ticks_ = 0;
  slow_evidence_.reset();
  readings_.clear();
  completions_.clear();
}

void OpenStart::learn(const Reading& reading) {
  learnt_.push_back(reading);
  ++learnt_readings_;
  while (learnt_.size() > kMaxLearnt || reading.at - learnt_.front().at > kLearnMemory) {
    learnt_.pop_front();
  }
}

}  // namespace edgeshed::law
