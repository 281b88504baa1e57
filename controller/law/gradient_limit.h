#pragma once

#include <chrono>
#include <optional>

#include "law/limit_algorithm.h"

namespace edgeshed::law {

// Gradient limit, after Netflix concurrency-limits' Gradient2: the limit
// follows the ratio of a long-term baseline latency to the latency now.
//
// Each tick with a latency sample (none: nothing completed, no evidence, the
// limit holds):
//
//   baseline  sample < baseline: baseline = sample. A lower latency proves the
//               service can do better; believed at once.
//             sample within baseline * (1 + tolerance): unchanged.
//             above that band continuously for baseline_rise_after: the
//               baseline rises, each tick
//               baseline += baseline_smoothing * (min(sample, 2 * baseline) - baseline),
//               until a sample is within baseline * (1 + tolerance / 2). A
//               slow drift, so that a service that really became slower is
//               accepted as such.
//   gradient  = clamp(baseline * (1 + tolerance) / sample, 0.5, 2.0)
//   congested = gradient < 1 || sheds > 0
//   target    = limit * gradient + (congested ? 0 : sqrt(limit))
//   next      = limit * (1 - smoothing) + target * smoothing
//   next      = clamp(next, limit * max_decrease_per_tick, limit * max_increase_per_tick)
//   limit     = clamp(next, min, max)
//
// Samples that cannot judge the limit:
//  - in-flight under half the limit: the limit was not tested, so the tick
//    only feeds the baseline (Gradient2's "app limited" rule); otherwise an
//    idle service would grow an arbitrarily large limit, or shrink it on noise.
//  - in-flight over the limit: the limit was not in force (the level did not
//    cap this traffic, e.g. the backlog of a burst before escalation), so a
//    slow sample does not lower the limit, nor raise the baseline; a fast one
//    still proves the limit too low.
//
// Sheds count as congestion: a shed connection was turned away, not served
// fast, so a fast sample from those let in proves nothing about spare room.
// They withhold the sqrt(limit) headroom; the latency gradient still moves the
// limit, because under sustained overload the cap sheds on every tick and a
// rule that never grew while shedding could never climb back to the service's
// capacity once below it.
//
// The baseline is learnt from the latencies the traffic itself produces; the
// limit is never pinned low to measure a no-load latency. A consequence: the
// law must see the service uncongested once (e.g. the daemon runs before the
// overload) to know its no-load latency. Started in the middle of an overload,
// it takes the congested latency as the baseline.
//
// Why the band and the rise delay: under sustained overload the law settles
// where the sample is at the edge of the band and wanders across it. If those
// samples pulled the baseline up, baseline and limit would creep up together
// for as long as the overload lasts. Latency that stays over the band for
// baseline_rise_after, although the limit falls meanwhile, is a slowdown, not
// queueing. The rise stops half-way into the band, not at its edge, where the
// gradient would be exactly 1 and a limit that fell during the slowdown could
// not grow back while the cap sheds.
//
// Defaults (tick 100 ms): initial 20, min 4, max 1000; smoothing 0.2 (a step
// goes 20% of the way); baseline_smoothing 0.01 and baseline_rise_after 2 s
// (a real slowdown is accepted at 1% per tick, after 2 s); growth at most
// x1.1 and fall at most x0.8 per tick (they bind when smoothing is raised).
// tolerance 0.15: under overload the limit settles where latency = baseline
// x 1.15, a queue of about 15% of the service's concurrency. Gradient2's 0.5
// would let admitted latency sit 50% over the service time, which defeats a
// shedder whose point is to keep what it admits fast; much lower makes one
// request of queueing at a small capacity look like congestion.
class GradientLimit final : public LimitAlgorithm {
 public:
  explicit GradientLimit(const GradientLimitConfig& config);

  uint32_t update(const LimitSample& sample) override;
  uint32_t limit() const override;

  // Estimated no-load latency, seconds; empty until the first sample.
  std::optional<double> baseline_seconds() const { return baseline_; }
  double estimate() const { return estimate_; }

 private:
  void track_baseline(double latency, std::chrono::nanoseconds now, bool may_rise);

  GradientLimitConfig config_;
  double estimate_;
  std::optional<double> baseline_;
  // Since when samples have been above the tolerance band without a break.
  std::optional<std::chrono::nanoseconds> above_band_since_;
  bool rising_ = false;  // a sustained rise of the baseline is under way
};

}  // namespace edgeshed::law
