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
// See capacity_limit.h, item 3.
constexpr double kHealthyHeadroom = 2.0;
constexpr std::chrono::nanoseconds kHealthyWindow = std::chrono::seconds(30);
}  // namespace

CapacityLimit::CapacityLimit(const CapacityLimitConfig& config)
    : config_(config), estimate_(std::clamp<double>(config.initial, config.min, config.max)) {}

uint32_t CapacityLimit::limit() const { return whole_limit(estimate_, config_.min); }

uint32_t CapacityLimit::update(const LimitSample& sample) {
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
  keep_healthy_room(sample, measured, binding);
  return limit();
}

void CapacityLimit::keep_healthy_room(const LimitSample& sample, bool measured, bool binding) {
  const uint32_t peak = std::max(sample.peak_inflight, sample.inflight);
  const uint32_t rise = peak > last_peak_ ? peak - last_peak_ : 0;
  last_peak_ = peak;
  if (sample.sheds > 0) last_shed_ = sample.now;
  recent_peaks_.push_back({sample.now, static_cast<double>(peak)});
  if (recent_peaks_.size() > kRecentTicks) recent_peaks_.pop_front();
  if (confirmed_at_) lowest_latency_.reset();
  if (measured && !confirmed_at_) {
    lowest_latency_ =
        std::min(lowest_latency_.value_or(*sample.latency_seconds), *sample.latency_seconds);
  }
  // What "no queue" is measured against: the floor, or until a probe has
  // confirmed it, the lowest latency seen too (an unconfirmed floor may be
  // the latency of an overload the law started in).
  std::optional<double> reference = lowest_latency_;
  if (floor_) reference = std::min(*floor_, reference.value_or(*floor_));
  const double far = 1.0 + 2.0 * config_.tolerance;
  // The average, or before it settles (it waits for the window to forget
  // what the law did not admit), this tick's latency.
  const double level = smoothed_ ? *smoothed_ : (measured ? *sample.latency_seconds : 0.0);
  if (binding && reference && level > *reference * far) {
    // An overload: what was carried before is no promise of what can be, and
    // the headroom over it is the law's to win back (the overload admitted
    // by it is a backlog the gradient would take long to undo).
    if (!healthy_peaks_.empty()) {
      estimate_ = std::min(estimate_, std::max<double>(config_.initial, proven_peak_));
    }
    healthy_peaks_.clear();
    proven_peak_ = 0.0;
    return;
  }
  while (!healthy_peaks_.empty() && sample.now - healthy_peaks_.front().at > kHealthyWindow) {
    healthy_peaks_.pop_front();
  }
  // This tick's own latency, not the average: the average stands still while in
  // flight is over the limit (a backlog teaches it nothing). No latency
  // before any response is a service yet to answer; after, a stall.
  const bool no_queue =
      measured ? !reference || *sample.latency_seconds <= *reference * far : !reference;
  // A tick that shed carried what the limit let in, not the demand, and so
  // may the next ones (an overload admitted by a limit that just rose meets
  // no refusal for a tick or two): a second without sheds first.
  const bool unshed = !last_shed_ || sample.now - *last_shed_ >= config_.stale_after;
  if (unshed && no_queue) {
    // Before any response the concurrency may still be climbing. After, the
    // responses of this tick vouch for the concurrency they met, over their
    // own latency: the queue of a slow service shows a latency later.
    double carried = static_cast<double>(peak) + rise;
    if (measured) {
      const auto since = sample.now - std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          std::chrono::duration<double>(*sample.latency_seconds));
      carried = peak;
      for (auto it = recent_peaks_.rbegin(); it != recent_peaks_.rend() && it->at >= since; ++it) {
        carried = std::min(carried, it->inflight);
      }
      proven_peak_ = std::max(proven_peak_, carried);
    }
    while (!healthy_peaks_.empty() && healthy_peaks_.back().inflight <= carried) {
      healthy_peaks_.pop_back();
    }
    healthy_peaks_.push_back({sample.now, carried});
  }
  // A probe lowers the limit on purpose, for a second.
  if (healthy_peaks_.empty() || probe_) return;
  estimate_ =
      std::clamp<double>(std::max(estimate_, kHealthyHeadroom * healthy_peaks_.front().inflight),
                         config_.min, config_.max);
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
