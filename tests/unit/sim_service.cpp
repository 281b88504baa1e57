#include "unit/sim_service.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "edgeshed/abi.h"

namespace edgeshed::sim {

namespace {
constexpr double kNever = std::numeric_limits<double>::infinity();
// How long the queue gate's record of entries is kept past its age.
constexpr double kEnteredMemory = 2.0;

double nearest_rank(std::vector<double>& values, double p) {
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(values.size())));
  return values[std::max<std::size_t>(rank, 1) - 1];
}
}  // namespace

SimService::SimService(const SimConfig& config)
    : config_(config),
      random_(config.seed),
      next_tick_(config.tick.count()),
      workers_(config.workers),
      service_time_(config.service_time.count()),
      load_(config.load) {
  if (config_.clients) {
    next_arrival_ = kNever;
    for (uint32_t i = 0; i < *config_.clients; ++i) retries_.push(0.0);
  } else {
    schedule_arrival();
  }
}

void SimService::set_load(double load) {
  load_ = load;
  if (!config_.clients) schedule_arrival();
}

void SimService::set_workers(uint32_t workers) {
  workers_ = workers;
  if (!config_.clients) schedule_arrival();
  start_waiting();
}

void SimService::set_service_time(Seconds service_time) {
  service_time_ = service_time.count();
  if (!config_.clients) schedule_arrival();
}

void SimService::add_backlog(uint32_t requests) {
  for (uint32_t i = 0; i < requests; ++i) waiting_.push_back({now_, 0, enter()});
  start_waiting();
}

double SimService::mean_service_time() const {
  if (config_.distribution != ServiceTimes::kBimodal) return service_time_;
  return (1.0 - config_.long_share) * service_time_ +
         config_.long_share * config_.long_time.count();
}

double SimService::draw_service_time() {
  switch (config_.distribution) {
    case ServiceTimes::kFixed:
      return service_time_;
    case ServiceTimes::kExponential:
      return std::exponential_distribution<double>(1.0 / service_time_)(random_);
    case ServiceTimes::kBimodal:
      return std::bernoulli_distribution(config_.long_share)(random_) ? config_.long_time.count()
                                                                      : service_time_;
  }
  return service_time_;
}

uint64_t SimService::enter() {
  const double keep = kEnteredMemory + (queue_age_ ? 2.0 * queue_age_->count() : 0.0);
  while (!entered_.empty() && entered_.front().at < now_ - keep) {
    entered_.pop_front();
    ++first_entered_;
  }
  entered_.push_back({now_, kNever});
  return first_entered_ + entered_.size() - 1;
}

// As the data plane reads its cohorts (queue_age.bpf.h), on exact times.
bool SimService::gate_shut() const {
  if (!queue_age_) return false;
  const auto age_ns = static_cast<uint64_t>(queue_age_->count() * 1e9);
  const double slice = std::ldexp(1e-9, static_cast<int>(edgeshed_cohort_shift(age_ns)));
  const double due_end = std::floor((now_ - queue_age_->count()) / slice) * slice;
  const double due_start = due_end - 2.0 * slice;
  const auto first = std::lower_bound(entered_.begin(), entered_.end(), due_start,
                                      [](const Entered& e, double t) { return e.at < t; });
  uint32_t arrived = 0;
  int32_t open = 0;
  for (auto it = first; it != entered_.end() && it->at < due_end; ++it) {
    ++arrived;
    if (it->left > now_) ++open;
  }
  return edgeshed_cohorts_queued(arrived, open) != 0;
}

// Poisson arrivals are memoryless: redrawing the next one when the rate
// changes is exact.
void SimService::schedule_arrival() {
  const double rate = load_ * capacity_per_second();
  next_arrival_ = rate > 0.0 ? now_ + std::exponential_distribution<double>(rate)(random_) : kNever;
}

uint32_t SimService::inflight() const {
  if (config_.clients) return connections_;
  return static_cast<uint32_t>(busy_.size() + waiting_.size());
}

void SimService::arrive() {
  const bool gated = inflight() < limit_ && gate_shut();
  if (inflight() < limit_ && !gated) {
    waiting_.push_back({now_, 0, enter()});
    start_waiting();
  } else {
    ++sheds_this_tick_;
    gate_sheds_this_tick_ += gated ? 1 : 0;
    gate_sheds_total_ += gated ? 1 : 0;
  }
  schedule_arrival();
}

void SimService::connect() {
  const bool gated = connections_ < limit_ && gate_shut();
  if (connections_ < limit_ && !gated) {
    ++connections_;
    waiting_.push_back({now_, config_.requests_per_connection - 1, enter()});
    start_waiting();
  } else {
    ++sheds_this_tick_;
    gate_sheds_this_tick_ += gated ? 1 : 0;
    gate_sheds_total_ += gated ? 1 : 0;
    retries_.push(now_ + config_.retry_after.count());
  }
}

void SimService::start_waiting() {
  while (!waiting_.empty() && busy_.size() < workers_) {
    busy_.push({now_ + draw_service_time(), waiting_.front()});
    waiting_.pop_front();
  }
}

void SimService::complete() {
  const Request request = busy_.top().request;
  busy_.pop();
  const double latency = now_ - request.arrived;
  if (request.id >= first_entered_ && request.id - first_entered_ < entered_.size()) {
    entered_[request.id - first_entered_].left = now_;
  }
  completions_.push_back({request.arrived, latency});
  window_.push_back({now_, latency});
  ++completions_this_tick_;
  if (config_.clients) {
    if (request.left > 0) {
      waiting_.push_back({now_, request.left - 1, enter()});
    } else {
      --connections_;
      connect();
    }
  }
  start_waiting();
}

void SimService::tick(const Law& law) {
  while (!window_.empty() && window_.front().at <= now_ - config_.window.count()) {
    window_.pop_front();
  }
  SimTick sample;
  sample.now = Seconds(now_);
  sample.interval = config_.tick;
  if (!window_.empty()) {
    std::vector<double> latencies;
    latencies.reserve(window_.size());
    for (const Done& done : window_) latencies.push_back(done.latency);
    sample.latency_seconds = nearest_rank(latencies, config_.quantile);
    sample.tail_seconds = nearest_rank(latencies, 0.99);
  }
  sample.gate_sheds = gate_sheds_this_tick_;
  sample.queued = gate_shut();
  sample.completions = completions_this_tick_;
  sample.inflight = inflight();
  sample.sheds = sheds_this_tick_;
  limit_ = law(sample);
  ticks_.push_back({now_, limit_, completions_this_tick_, sheds_this_tick_, sample.inflight});
  completions_this_tick_ = 0;
  sheds_this_tick_ = 0;
  gate_sheds_this_tick_ = 0;
}

void SimService::run(Seconds duration, const Law& law) {
  const double end = now_ + duration.count();
  for (;;) {
    const double next_done = busy_.empty() ? kNever : busy_.top().done;
    const double next_retry = retries_.empty() ? kNever : retries_.top();
    const double next = std::min({next_done, next_arrival_, next_retry, next_tick_});
    if (next > end) break;
    now_ = next;
    // Completions first: a slot freed at the same instant is free for an arrival.
    if (next == next_done) {
      complete();
    } else if (next == next_tick_) {
      tick(law);
      next_tick_ += config_.tick.count();
    } else if (next == next_arrival_) {
      arrive();
    } else {
      retries_.pop();
      connect();
    }
  }
  now_ = end;
}

double latency_quantile(const std::vector<SimCompletion>& completions, double from, double to,
                        double p) {
  std::vector<double> latencies;
  for (const SimCompletion& completion : completions) {
    if (completion.arrived >= from && completion.arrived < to) {
      latencies.push_back(completion.latency);
    }
  }
  return latencies.empty() ? 0.0 : nearest_rank(latencies, p);
}

double unloaded_quantile(const SimConfig& config, double p) {
  const double s = config.service_time.count();
  switch (config.distribution) {
    case ServiceTimes::kFixed:
      return s;
    case ServiceTimes::kExponential:
      return -s * std::log(1.0 - p);
    case ServiceTimes::kBimodal:
      return p > 1.0 - config.long_share ? config.long_time.count() : s;
  }
  return s;
}

}  // namespace edgeshed::sim
