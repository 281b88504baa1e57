// The control law, with its default configuration, against a simulated
// service in discrete 1 ms steps.
//
// Service: kSlots (C) workers, each request takes kServiceTime (S), FIFO queue
// when all are busy. Open-loop Poisson arrivals, all of class normal. The
// law's policy for normal is applied as the data plane applies it: a new
// arrival is admitted only if the admit draw passes and in-flight (in service
// plus queued) is below the cap; otherwise it is shed. Every 100 ms tick the
// law gets one signal, in-flight / kInflightTarget, and the p90 latency of the
// requests completed during that tick.
//
// Scenario: 10 s at half load (the daemon runs before the overload comes, so
// the gradient limit has seen the service's no-load latency; started in the
// middle of an overload it cannot know it, see gradient_limit.h), 60 s at 2x
// or 5x capacity, then 20 s at half load.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "common/fake_clock.h"
#include "law/control_law.h"

namespace edgeshed::law {
namespace {

using edgeshed::testing::FakeClock;
using std::chrono::milliseconds;

constexpr int kSlots = 10;
constexpr milliseconds kServiceTime{20};
constexpr double kCapacityPerMs = static_cast<double>(kSlots) / kServiceTime.count();
constexpr milliseconds kTick{100};
// In-flight at 90% of the slots is "at target": a capped service at capacity
// sits over it (pressure ~1.2, holds high), half load (in-flight ~5) is far
// under every exit threshold.
constexpr double kInflightTarget = 9.0;
// The signal is in-flight averaged over about a second (an exponential moving
// average updated every step), as real load signals such as PSI avg10 are:
// raw Poisson bursts at half load would keep resetting the exit timers.
constexpr double kSignalSmoothingSteps = 1000.0;

double percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<std::size_t>(std::ceil(p * values.size()));
  return values[std::max<std::size_t>(rank, 1) - 1];
}

struct TickRecord {
  milliseconds at;
  Level level;
  bool level_changed;
  uint32_t limit;
};

struct Completion {
  milliseconds arrived;
  double latency_ms;
};

class SimulatedService {
 public:
  explicit SimulatedService(uint32_t seed) : random_(seed) {}

  // Runs `duration` of arrivals at `load` times capacity, ticking the law.
  void run(ControlLaw& law, FakeClock& clock, double load, milliseconds duration) {
    const milliseconds end = now_ + duration;
    std::poisson_distribution<int> arrivals(load * kCapacityPerMs);
    std::uniform_real_distribution<double> draw(0.0, 1.0);
    while (now_ < end) {
      complete_and_start();
      for (int i = arrivals(random_); i > 0; --i) {
        const ClassPolicy& policy = decision_.policy(TrafficClass::kNormal);
        const bool drawn = draw(random_) < policy.admit_fraction;
        if (drawn && inflight() < policy.inflight_cap) {
          queue_.push_back(now_);
        } else {
          ++sheds_this_tick_;
        }
      }
      complete_and_start();  // an arrival to an idle slot starts at once
      smoothed_inflight_ += (inflight() - smoothed_inflight_) / kSignalSmoothingSteps;
      now_ += milliseconds(1);
      clock.advance(milliseconds(1));
      if (now_.count() % kTick.count() == 0) tick(law);
    }
  }

  const std::vector<TickRecord>& ticks() const { return ticks_; }
  const std::vector<Completion>& completions() const { return completions_; }

 private:
  uint32_t inflight() const { return static_cast<uint32_t>(in_service_.size() + queue_.size()); }

  void complete_and_start() {
    while (!in_service_.empty() && in_service_.front().done <= now_) {
      const double latency_ms = static_cast<double>((now_ - in_service_.front().arrived).count());
      completions_.push_back({in_service_.front().arrived, latency_ms});
      latencies_this_tick_.push_back(latency_ms / 1000.0);
      in_service_.pop_front();
    }
    while (!queue_.empty() && in_service_.size() < kSlots) {
      // Equal service times: completion order is start order, a deque suffices.
      in_service_.push_back({queue_.front(), now_ + kServiceTime});
      queue_.pop_front();
    }
  }

  void tick(ControlLaw& law) {
    TickInputs inputs;
    inputs.signals.push_back({"inflight", smoothed_inflight_, kInflightTarget,
                              /*hard_safety=*/false, /*stale=*/false});
    if (!latencies_this_tick_.empty()) {
      inputs.latency_seconds = percentile(latencies_this_tick_, 0.9);
    }
    inputs.completions = latencies_this_tick_.size();
    inputs.inflight[index_of(TrafficClass::kNormal)] = inflight();
    inputs.sheds[index_of(TrafficClass::kNormal)] = sheds_this_tick_;
    decision_ = law.tick(inputs);
    ticks_.push_back({now_, decision_.level, decision_.level_changed, decision_.adaptive_limit});
    latencies_this_tick_.clear();
    sheds_this_tick_ = 0;
  }

  struct InService {
    milliseconds arrived;
    milliseconds done;
  };

  std::mt19937 random_;
  milliseconds now_{0};
  std::deque<milliseconds> queue_;
  std::deque<InService> in_service_;
  Decision decision_;
  std::vector<double> latencies_this_tick_;
  uint64_t sheds_this_tick_ = 0;
  double smoothed_inflight_ = 0.0;
  std::vector<TickRecord> ticks_;
  std::vector<Completion> completions_;
};

class ClosedLoopTest : public ::testing::TestWithParam<double> {};

TEST_P(ClosedLoopTest, SettlesNearCapacityThenRecovers) {
  const double overload = GetParam();
  constexpr milliseconds kWarmUpTime{10'000};
  constexpr milliseconds kLoadTime{60'000};
  constexpr milliseconds kRecoveryTime{20'000};
  constexpr milliseconds kLoadEnd = kWarmUpTime + kLoadTime;
  constexpr milliseconds kSteadyFrom = kWarmUpTime + kLoadTime / 2;

  ControlLawConfig config;  // the defaults under test
  config.mode = Mode::kEnforce;
  FakeClock clock;
  LevelControlLaw law(config, clock);
  SimulatedService service(/*seed=*/42);

  service.run(law, clock, 0.5, kWarmUpTime);
  service.run(law, clock, overload, kLoadTime);

  double limit_sum = 0;
  int limit_ticks = 0;
  int level_changes = 0;
  for (const TickRecord& tick : service.ticks()) {
    if (tick.at <= kSteadyFrom) continue;
    limit_sum += tick.limit;
    ++limit_ticks;
    level_changes += tick.level_changed ? 1 : 0;
  }
  const double mean_limit = limit_sum / limit_ticks;
  std::vector<double> steady_latencies;
  for (const Completion& completion : service.completions()) {
    if (completion.arrived >= kSteadyFrom) steady_latencies.push_back(completion.latency_ms);
  }
  ASSERT_FALSE(steady_latencies.empty());
  const double p99 = percentile(steady_latencies, 0.99);

  EXPECT_NEAR(mean_limit, kSlots, 0.2 * kSlots);
  EXPECT_LT(p99, 1.5 * kServiceTime.count());
  // Half a minute of steady load: at most one change per minute means at most one.
  EXPECT_LE(level_changes, 1);

  service.run(law, clock, 0.5, kRecoveryTime);
  std::optional<milliseconds> normal_since;
  for (const TickRecord& tick : service.ticks()) {
    if (tick.at <= kLoadEnd) continue;
    if (tick.level != Level::kNormal) {
      normal_since.reset();  // must return to normal and stay there
    } else if (!normal_since) {
      normal_since = tick.at;
    }
  }
  ASSERT_TRUE(normal_since.has_value()) << "never returned to normal";
  EXPECT_LE(*normal_since - kLoadEnd, milliseconds(10'000));

  RecordProperty("mean_limit", std::to_string(mean_limit));
  RecordProperty("p99_ms", std::to_string(p99));
  RecordProperty("normal_after_ms", std::to_string((*normal_since - kLoadEnd).count()));
}

INSTANTIATE_TEST_SUITE_P(Overloads, ClosedLoopTest, ::testing::Values(2.0, 5.0),
                         [](const ::testing::TestParamInfo<double>& info) {
                           return "x" + std::to_string(static_cast<int>(info.param));
                         });

}  // namespace
}  // namespace edgeshed::law
