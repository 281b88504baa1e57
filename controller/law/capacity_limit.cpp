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
// A warm start's knowledge on trial (OpenStart::warm_start_on_trial): the
// completions per second of the ticks that proved the queue, over this
// many ticks, against those under the limit once the requests admitted
// before it had time to leave (kTrialDrainLatencies of the latency at the
// proof, at least kTrialDrainTicks), measured for kTrialMeasureFloors of
// the learnt floor (at least kTrialMeasureTicks). A queued service keeps
// its throughput under a limit at its capacity; a service that needs the
// concurrency loses it, and the limit opens again. The limit starts at the
// knee (Little's law at a p90 floor), where a queued service may lose a
// fifth (nginx, 10 slots, limit 8: 79%, refuted at 80%); another service
// loses nearly all of it (2% in the simulator).
constexpr std::size_t kTrialRateTicks = 3;
constexpr double kTrialDrainLatencies = 1.5;
constexpr int kTrialDrainTicks = 2;
constexpr double kTrialMeasureFloors = 5.0;
constexpr int kTrialMeasureTicks = 3;
constexpr double kTrialHold = 0.5;
}  // namespace

CapacityLimit::CapacityLimit(const CapacityLimitConfig& config)
    : config_(config),
      estimate_(std::clamp<double>(config.initial, config.min, config.max)),
      unproven_(config.cold_start == ColdStart::kOpen),
      open_start_(config) {}

std::optional<Knowledge> CapacityLimit::knowledge() const {
  if (unproven_) return open_start_.knowledge();
  if (!floor_confirmed() || !floor_) return std::nullopt;
  Knowledge k;
  k.floor_seconds = *floor_;
  k.inflight = whole_limit(estimate_, config_.min);
  k.rate = estimate_ / *floor_;
  k.peak_inflight = std::max(k.inflight, open_start_.healthy_peak());
  k.readings = open_start_.readings();
  k.tail_seconds = (proven_tail_ ? proven_tail_ : open_start_.tail()).value_or(0.0);
  return k;
}

std::optional<std::chrono::nanoseconds> CapacityLimit::queue_age() const {
  if (!(config_.queue_gate > 0.0)) return std::nullopt;
  const std::optional<double> tail = unproven_ ? open_start_.tail() : proven_tail_;
  if (!tail) return std::nullopt;
  double slower = 1.0;
  if (!unproven_ && floor_confirmed() && floor_ && proven_floor_ && *proven_floor_ > 0.0) {
    slower = std::max(1.0, *floor_ / *proven_floor_);
  }
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::duration<double>(config_.queue_gate * *tail * slower));
}

uint32_t CapacityLimit::limit() const {
  return unproven_ ? config_.max : whole_limit(estimate_, config_.min);
}

uint32_t CapacityLimit::update(const LimitSample& sample) {
  if (unproven_) {
    // Before the proof drops the ticks of the queue's growth, which a tail
    // of a second or two of healthy ticks would go with.
    const std::optional<double> tail = open_start_.tail();
    const std::optional<double> start = open_start_.prove(sample);
    if (!start) return limit();
    estimate_ = *start;
    unproven_ = false;
    proven_tail_ = tail;
    proven_floor_ = open_start_.start_floor();
    if (open_start_.warm_start_on_trial()) start_trial(sample);
  }
  if (trial_) {
    remember_completions(sample);
    continue_trial(sample);
    return limit();
  }
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
  remember_completions(sample);
  return limit();
}

void CapacityLimit::remember_completions(const LimitSample& sample) {
  if (!sample.completions) return;
  recent_completions_.push_back(*sample.completions);
  if (recent_completions_.size() > kRecentTicks) recent_completions_.pop_front();
}

void CapacityLimit::start_trial(const LimitSample& sample) {
  uint64_t completed = sample.completions.value_or(0);
  std::size_t ticks = 1;
  for (auto it = recent_completions_.rbegin();
       it != recent_completions_.rend() && ticks < kTrialRateTicks; ++it, ++ticks) {
    completed += *it;
  }
  const double seconds = std::chrono::duration<double>(sample.interval).count() * ticks;
  const double latency = sample.latency_seconds.value_or(0.0);
  const auto drain = std::max(sample.interval * kTrialDrainTicks,
                              std::chrono::duration_cast<std::chrono::nanoseconds>(
                                  std::chrono::duration<double>(kTrialDrainLatencies * latency)));
  const auto measure = std::max(
      sample.interval * kTrialMeasureTicks,
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::duration<double>(kTrialMeasureFloors * proven_floor_.value_or(0.0))));
  trial_ = Trial{sample.now + drain, sample.now + drain + measure,
                 seconds > 0.0 ? static_cast<double>(completed) / seconds : 0.0};
}

void CapacityLimit::continue_trial(const LimitSample& sample) {
  Trial& trial = *trial_;
  if (sample.now > trial.measure_from && sample.completions) {
    trial.completions += *sample.completions;
    trial.measured += sample.interval;
  }
  if (sample.now < trial.until) return;
  const double seconds = std::chrono::duration<double>(trial.measured).count();
  const double rate = seconds > 0.0 ? static_cast<double>(trial.completions) / seconds : 0.0;
  if (rate >= kTrialHold * trial.proof_rate) {
    trial_.reset();
    return;
  }
  // Refuted: open again, as a cold start that has learnt this run's ticks.
  OpenStart open_start = std::move(open_start_);
  open_start.refute_warm_start();
  *this = CapacityLimit(config_);
  open_start_ = std::move(open_start);
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
