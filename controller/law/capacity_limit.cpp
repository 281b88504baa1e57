#include "law/capacity_limit.h"

#include <algorithm>
#include <cmath>

#include "law/whole_limit.h"

namespace edgeshed::law {

namespace {
constexpr double kMinGradient = 0.5;
constexpr double kMaxGradient = 2.0;
constexpr double kLatencySmoothing = 0.3;
// A tick with fewer responses than this moves the latency average and the
// limit proportionally less: its quantile is mostly noise.
constexpr double kFullWeightCompletions = 10.0;
// Drain and measurement of a probe last at least this many floor latencies.
constexpr double kProbeRounds = 5.0;
// A probe counts at least this many responses before judging throughput.
constexpr uint64_t kProbeCompletions = 400;
// Weight of a new probe's floor against a consistent earlier one.
constexpr double kFloorAveraging = 0.3;
// A slow service counts its rate before a probe over at most this many ticks.
constexpr std::size_t kMaxBeforeTicks = 20;
// Ticks in a row the limit must bind before a latency over the band lowers it.
constexpr std::size_t kSustainedTicks = 5;
// An isolated tick that shed: the limit grows by this factor.
constexpr double kBurstGrowth = 1.25;
// Share of the way the floor follows a lasting rise per tick, without overload.
constexpr double kFloorRise = 0.02;
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
// The floor is a low quantile of the ticks' latencies: their minimum sinks
// with noise, their median carries the queueing of a busy service.
constexpr double kFloorQuantile = 0.25;
// A warm start's floor and this run's tick agree within this factor.
constexpr double kWarmAgreement = 1.5;

double quantile(std::vector<double> values, double q) {
  const auto nth = values.begin() + static_cast<std::ptrdiff_t>(q * (values.size() - 1));
  std::nth_element(values.begin(), nth, values.end());
  return *nth;
}
}  // namespace

CapacityLimit::CapacityLimit(const CapacityLimitConfig& config)
    : config_(config),
      estimate_(std::clamp<double>(config.initial, config.min, config.max)),
      unproven_(config.cold_start == ColdStart::kOpen) {}

void CapacityLimit::warm_start(const Knowledge& knowledge) {
  if (!(knowledge.floor_seconds > 0.0) || !std::isfinite(knowledge.floor_seconds) ||
      !(knowledge.rate > 0.0)) {
    return;
  }
  warm_ = knowledge;
}

std::optional<Knowledge> CapacityLimit::knowledge() const {
  if (!unproven_) {
    if (!floor_confirmed() || !floor_) return std::nullopt;
    Knowledge k;
    k.floor_seconds = *floor_;
    k.inflight = whole_limit(estimate_, config_.min);
    k.rate = estimate_ / *floor_;
    k.peak_inflight = std::max(k.inflight, warm_placed_ ? warm_->peak_inflight : 0u);
    for (const Reading& r : learnt_) k.peak_inflight = std::max(k.peak_inflight, r.inflight);
    k.readings = learnt_readings_ + (warm_placed_ ? warm_->readings : 0);
    return k;
  }
  if (learnt_.size() < kMinLearnt) return warm_placed_ ? warm_ : std::nullopt;
  std::vector<double> latencies;
  std::vector<double> inflight;
  std::vector<double> rates;
  latencies.reserve(learnt_.size());
  inflight.reserve(learnt_.size());
  rates.reserve(learnt_.size());
  uint32_t peak = 0;
  for (const Reading& r : learnt_) {
    latencies.push_back(r.latency);
    inflight.push_back(r.inflight);
    rates.push_back(r.rate.value_or(0.0));
    peak = std::max(peak, r.inflight);
  }
  Knowledge k;
  k.floor_seconds = quantile(std::move(latencies), kFloorQuantile);
  k.inflight = static_cast<uint32_t>(std::lround(quantile(std::move(inflight), 0.5)));
  k.rate = quantile(std::move(rates), 0.5);
  k.peak_inflight = peak;
  k.readings = learnt_readings_ + (warm_placed_ ? warm_->readings : 0);
  return k;
}

uint32_t CapacityLimit::limit() const {
  return unproven_ ? config_.max : whole_limit(estimate_, config_.min);
}

std::optional<double> CapacityLimit::unproven_rate(const LimitSample& sample) {
  if (!sample.completions || sample.interval.count() <= 0) return std::nullopt;
  unproven_completions_.push_back({sample.now, *sample.completions, sample.latency_seconds});
  // Ticks before the first completion are before the traffic: counted, they
  // would make a load that starts after a quiet spell look like a ramp-up.
  // A slow service completes fewer than kReadingCompletions in kRateWindow
  // (10 x 2 s: 5 a second): its window stretches until it holds that many,
  // up to kMaxRateWindow, or its queue would never be proven.
  uint64_t completed = 0;
  for (const auto& tick : unproven_completions_) completed += tick.count;
  while (!unproven_completions_.empty()) {
    const auto& [at, count, latency] = unproven_completions_.front();
    const auto age = sample.now - at;
    const bool stale =
        age >= kMaxRateWindow || (age >= kRateWindow && completed - count >= kReadingCompletions);
    if (count != 0 && !stale) break;
    completed -= count;
    unproven_completions_.pop_front();
  }
  if (completed < kReadingCompletions) return std::nullopt;
  const auto covered = sample.now - unproven_completions_.front().at + sample.interval;
  return static_cast<double>(completed) / std::chrono::duration<double>(covered).count();
}

std::optional<double> CapacityLimit::stretched_latency(const LimitSample& sample) const {
  if (unproven_completions_.empty() ||
      sample.now - unproven_completions_.front().at < kRateWindow) {
    return std::nullopt;
  }
  double sum = 0.0;
  uint64_t weight = 0;
  for (const auto& tick : unproven_completions_) {
    if (!tick.latency || !std::isfinite(*tick.latency) || tick.count == 0) continue;
    sum += *tick.latency * static_cast<double>(tick.count);
    weight += tick.count;
  }
  if (weight == 0) return std::nullopt;
  return sum / static_cast<double>(weight);
}

std::optional<double> CapacityLimit::saturated_rate() const {
  if (queue_ticks_ < kQueueTicks || unproven_completions_.size() < kQueueTicks + 1) {
    return std::nullopt;
  }
  // The completions of the last kQueueTicks ticks, over the time since the
  // tick before them.
  const auto end = unproven_completions_.end();
  uint64_t completed = 0;
  for (auto it = end - kQueueTicks; it != end; ++it) completed += it->count;
  const auto covered = (end - 1)->at - (end - kQueueTicks - 1)->at;
  if (covered.count() <= 0 || completed < kReadingCompletions) return std::nullopt;
  return static_cast<double>(completed) / std::chrono::duration<double>(covered).count();
}

bool CapacityLimit::prove_queue(const LimitSample& sample) {
  const uint32_t inflight = std::max(sample.inflight, sample.peak_inflight);
  // Shedding at max: the limit binds already, whatever the latency says.
  bool queue = sample.sheds > 0 && inflight >= config_.max;
  const std::optional<double> rate = unproven_rate(sample);
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
    if (warm_ && !warm_placed_ && rate && latency < warm_->floor_seconds * kWarmAgreement &&
        latency * kWarmAgreement > warm_->floor_seconds) {
      readings_.push_back({sample.now, warm_->floor_seconds, warm_->inflight, warm_->rate, true});
      warm_placed_ = true;
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
      rising = latency > lowest->latency * kQueueRise &&
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
      readings_.push_back({sample.now, latency, inflight, rate});
      if (rate) learn(readings_.back());
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
  if (!queue) return false;
  // Little's law at saturation: the concurrency that completes what the
  // service completes now, at the latency it had before the queue. Where
  // there was no such latency (a backlog before the law), `initial`; where
  // that latency is of the last seconds only, it may be a backlog's, and the
  // start stays within [initial, kMaxStartFactor x initial]. A floor learnt
  // over minutes of healthy ticks (this run's, or a warm start's that a tick
  // agreed with) is no backlog's: Little's law needs no upper bound, and a
  // service of 200 slots starts near 200, not at 80.
  const std::optional<Knowledge> learnt = knowledge();
  if (rate && learnt) {
    // The rate of the ticks that proved it: the window may still hold ticks
    // from before the overload (at 0.5x before a 2x overload, 7 for 10 slots).
    estimate_ = saturated_rate().value_or(*rate) * learnt->floor_seconds;
  } else if (rate && lowest) {
    estimate_ = std::clamp<double>(*rate * lowest->latency, config_.initial,
                                   kMaxStartFactor * config_.initial);
  } else {
    estimate_ = config_.initial;
  }
  estimate_ = std::clamp<double>(estimate_, config_.min, config_.max);
  unproven_ = false;
  // The ticks of the memory before the evidence were the queue growing.
  while (!learnt_.empty() && sample.now - learnt_.back().at < kQueueMemory) learnt_.pop_back();
  readings_.clear();
  unproven_completions_.clear();
  return true;
}

void CapacityLimit::learn(const Reading& reading) {
  learnt_.push_back(reading);
  ++learnt_readings_;
  while (learnt_.size() > kMaxLearnt || reading.at - learnt_.front().at > kLearnMemory) {
    learnt_.pop_front();
  }
}

uint32_t CapacityLimit::update(const LimitSample& sample) {
  if (unproven_ && !prove_queue(sample)) return limit();
  const bool measured = sample.latency_seconds && std::isfinite(*sample.latency_seconds) &&
                        *sample.latency_seconds > 0.0;
  const uint32_t current = limit();
  const bool over_limit = sample.inflight > current;
  const bool binding = !over_limit && (sample.sheds > 0 || sample.inflight + 1 >= current);
  if (!binding) binding_since_.reset();
  if (binding && !binding_since_) binding_since_ = sample.now;
  binding_ticks_ = binding ? binding_ticks_ + 1 : 0;
  // Whether the limit had not bound for a while before this tick. More in
  // flight than the limit (connections held open, a backlog) is not calm.
  calm_ = unbound_since_ && sample.now - *unbound_since_ >= config_.stale_after;
  if (binding || over_limit) unbound_since_.reset();
  if (!binding && !over_limit && !unbound_since_) unbound_since_ = sample.now;

  if (probe_) {
    continue_probe(sample, measured ? sample.latency_seconds : std::nullopt, binding, over_limit);
  } else if (measured) {
    step(sample, *sample.latency_seconds, binding);
  } else {
    above_band_since_.reset();
  }
  if (sample.completions) {
    recent_completions_.push_back(*sample.completions);
    if (recent_completions_.size() > kRecentTicks) recent_completions_.pop_front();
  }
  return limit();
}

void CapacityLimit::start_probe(std::chrono::nanoseconds now, std::optional<double> before_rate,
                                double chain_limit, double chain_latency) {
  // A slow service needs several of its own latencies to show the effect.
  const auto service_rounds = std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::duration<double>(kProbeRounds * floor_.value_or(0.0)));
  const auto half = std::clamp(service_rounds, config_.probe_time / 2, config_.probe_time * 5);
  probe_ = Probe{now, half, half, before_rate, chain_limit, chain_latency};
  estimate_ = std::max<double>(config_.min, estimate_ * config_.probe_factor);
  above_band_since_.reset();
}

void CapacityLimit::continue_probe(const LimitSample& sample, std::optional<double> latency,
                                   bool binding, bool over_limit) {
  Probe& probe = *probe_;
  const auto elapsed = sample.now - probe.started;
  // The drain lets the queue empty and the signal's window forget the
  // latencies from before the probe.
  if (elapsed > probe.drain) {
    if (latency) {
      probe.latency_sum += *latency;
      ++probe.latency_samples;
    }
    if (sample.completions) {
      probe.completions += *sample.completions;
      ++probe.completion_ticks;
    }
    probe.binding_ticks += binding ? 1 : 0;
    probe.over_limit_ticks += over_limit ? 1 : 0;
    ++probe.ticks;
  }
  if (elapsed < probe.drain + probe.measure) return;
  // Counting noise: wait for enough responses, within reason.
  if (probe.completions < kProbeCompletions && elapsed < probe.drain + 4 * probe.measure) return;

  const Probe done = probe;
  probe_.reset();
  if (done.latency_samples == 0) return;  // no evidence: the old floor stands
  // In flight stayed over the probe's limit (keep-alive connections admitted
  // before it carry on): the latency is theirs, whatever the limit. No
  // floor, no jump back: the lower limit holds until they leave.
  if (done.over_limit_ticks * 2 >= done.ticks) return;
  const double measured = done.latency_sum / done.latency_samples;
  std::optional<double> rate;
  if (done.completion_ticks > 0) {
    rate = static_cast<double>(done.completions) / done.completion_ticks;
  }
  const bool at_min = estimate_ <= config_.min;
  // Demand under the probe's limit: what was measured is the service's own
  // latency, not a queue the limit let in.
  const bool unbound = done.binding_ticks * 2 < done.ticks;
  bool throughput_fell = false;
  if (rate && done.before_rate) {
    // The limit was cut by (1 - probe_factor): below the knee, throughput
    // falls with it; above, it stays. Half the cut, and out of the counting
    // noise (Poisson: sqrt of the count) of the rate before.
    const double before = *done.before_rate;
    const double noise = std::sqrt(before / done.completion_ticks);
    throughput_fell = *rate < before * (1.0 - (1.0 - config_.probe_factor) / 2.0) - noise;
  }
  if (throughput_fell || unbound || at_min) {
    // A confirmed floor close to the last confirmed one is averaged with it:
    // the floor sets the limit, so its noise would become the limit's drift.
    const bool consistent = floor_ && confirmed_at_ &&
                            measured < *floor_ * (1.0 + 2.0 * config_.tolerance) &&
                            measured > *floor_ * (1.0 - 2.0 * config_.tolerance);
    floor_ = consistent ? *floor_ + kFloorAveraging * (measured - *floor_) : measured;
    smoothed_ = measured;
    confirmed_at_ = sample.now;
    // Where the chain started, the limit was in force and the service queued:
    // latency grows with the limit there (Little's law), so the limit that
    // gives the band's latency is proportional. Never above where the chain
    // started, never below the level just confirmed under the knee.
    const double jump =
        done.chain_limit * measured * (1.0 + config_.tolerance) / done.chain_latency;
    estimate_ = std::clamp(jump, estimate_, std::max(estimate_, done.chain_limit));
    return;
  }
  // Throughput held: the service still queued at the probe's limit, so the
  // measured latency is an upper bound of the floor. Probe one step lower.
  floor_ = measured;
  smoothed_ = measured;
  confirmed_at_.reset();
  start_probe(sample.now, rate, done.chain_limit, done.chain_latency);
}

CapacityLimit::Rate CapacityLimit::recent_rate(std::size_t ticks) const {
  // At least `ticks`, more if needed to count kProbeCompletions, within the
  // time binding has lasted.
  Rate rate;
  uint64_t sum = 0;
  for (auto it = recent_completions_.rbegin();
       it != recent_completions_.rend() && rate.ticks < binding_ticks_ &&
       (rate.ticks < ticks || sum < kProbeCompletions);
       ++it) {
    sum += *it;
    ++rate.ticks;
  }
  rate.completions = sum;
  if (rate.ticks > 0) rate.per_tick = static_cast<double>(sum) / rate.ticks;
  return rate;
}

void CapacityLimit::step(const LimitSample& sample, double latency, bool binding) {
  const uint32_t current = limit();
  // More in flight than the limit allows (e.g. the backlog of an overload the
  // law started in, or a level that did not cap this traffic): the latency
  // is that of work the limit never admitted. It proves nothing about the
  // limit nor about the floor.
  if (sample.inflight > current) {
    above_band_since_.reset();
    below_band_since_.reset();
    in_force_since_.reset();
    return;
  }
  // The signal's window still holds that backlog's latencies for a while;
  // and at the start, it holds only the requests short enough to have
  // completed already.
  if (!in_force_since_) in_force_since_ = sample.now;
  const auto settle = std::max<std::chrono::nanoseconds>(
      config_.probe_time / 2, std::chrono::duration_cast<std::chrono::nanoseconds>(
                                  std::chrono::duration<double>(2.0 * latency)));
  if (sample.now - *in_force_since_ < settle) return;
  // A quantile of few responses is mostly noise: a tick moves the law in
  // proportion to the responses it saw, up to kFullWeightCompletions.
  const double weight =
      sample.completions
          ? std::min(1.0, static_cast<double>(*sample.completions) / kFullWeightCompletions)
          : 1.0;
  smoothed_ =
      smoothed_ ? *smoothed_ + weight * kLatencySmoothing * (latency - *smoothed_) : latency;
  if (!floor_) floor_ = *smoothed_;
  const double band = this->config_.tolerance;

  // Clearly faster than the floor: the service got faster. Lastingly: that is
  // the floor. Either way the floor is stale: as the limit grows into the new
  // room the queue hides the new floor again, so the next overload probes.
  if (*smoothed_ < *floor_ * (1.0 - band)) {
    confirmed_at_.reset();
    if (!below_band_since_) below_band_since_ = sample.now;
    if (sample.now - *below_band_since_ >= config_.stale_after) floor_ = *smoothed_;
  } else {
    below_band_since_.reset();
  }
  // Lastingly slower while the limit does not bind: whatever queue there is,
  // the limit did not let it in, so this is the service's own latency at this
  // load. Followed slowly, and left unconfirmed: it may hold the service's own
  // queueing, so the first sustained overload probes it.
  if (!binding_since_ && unbound_since_ && sample.now - *unbound_since_ >= config_.stale_after &&
      *smoothed_ > *floor_ * (1.0 + band)) {
    *floor_ += weight * kFloorRise * (*smoothed_ - *floor_);
    confirmed_at_.reset();
  }
  const bool tested = uint64_t{sample.inflight} * 2 >= current;

  if (tested && *smoothed_ > *floor_ * (1.0 + 2.0 * band)) {
    if (!above_band_since_) {
      above_band_since_ = sample.now;
      limit_above_band_ = estimate_;
    }
  } else {
    above_band_since_.reset();
  }
  if (binding && binding_since_ && (sample.now - *binding_since_) * 2 >= config_.probe_time) {
    const bool stale_floor = !confirmed_at_ || sample.now - *confirmed_at_ >= config_.floor_ttl;
    // Far over the band for a while although the limit fell by a probe's
    // step: the latency does not follow the limit, the service got slower.
    const bool stuck_above = above_band_since_ &&
                             sample.now - *above_band_since_ >= config_.stale_after &&
                             estimate_ <= limit_above_band_ * config_.probe_factor;
    const Rate before = recent_rate(static_cast<std::size_t>(
        sample.interval.count() > 0 ? config_.probe_time / (sample.interval * 2) : 5));
    // The rate before must be as well counted as the probe's, or its noise
    // decides the probe (a slow service may never count that many: then a
    // probe's worth of ticks will do).
    const bool counted = before.completions >= kProbeCompletions || before.ticks >= kMaxBeforeTicks;
    if ((stale_floor || stuck_above) && counted) {
      start_probe(sample.now, before.per_tick, estimate_, *smoothed_);
      return;
    }
  }

  // A limit that has not bound for a while is not what queues the service,
  // whatever the latency: it keeps growing away from the bursts, which peak
  // between ticks, up to four times the in-flight seen at the ticks.
  const bool calm = calm_ && !binding;
  if (!tested && !(calm && uint64_t{sample.inflight} * 4 >= current)) return;
  const double gradient =
      calm ? 1.0 + band
           : std::clamp(*floor_ * (1.0 + band) / *smoothed_, kMinGradient, kMaxGradient);
  // Under sustained overload the limit binds on every tick, or the latency is
  // far over the band. A limit that binds now and then, with a latency near
  // the band, is met by bursts of a load the service handles (its own
  // queueing in a burst is not for the limit to remove): it does not fall
  // for those, and it makes room for what it shed.
  const bool congested = *smoothed_ > *floor_ * (1.0 + 2.0 * band);
  // Without the limit binding, lowering it removes nothing.
  if (gradient < 1.0 && !binding) return;
  if (!congested && binding_ticks_ < kSustainedTicks && (gradient < 1.0 || sample.sheds > 0)) {
    if (sample.sheds > 0 && calm_) {
      estimate_ = std::min<double>(config_.max, estimate_ * kBurstGrowth);
    }
    return;
  }
  const double gain = config_.smoothing * weight;
  double next = estimate_ * (1.0 - gain + gain * gradient);
  next = std::clamp(next, estimate_ * config_.max_decrease_per_tick,
                    estimate_ * config_.max_increase_per_tick);
  estimate_ = std::clamp<double>(next, config_.min, config_.max);
}

}  // namespace edgeshed::law
