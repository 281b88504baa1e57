// Deterministic discrete-event model of a protected service that accepts at
// once and queues inside (nginx in front of a worker pool), for testing limit
// algorithms without a kernel.
//
// C worker slots and a FIFO queue inside the process; service time S, fixed
// or exponential with mean S. A connection carries one request and is in
// flight from admission until its response completes. Admission is the data
// plane's: in-flight < limit, otherwise the connection is shed.
//
// Two arrival models:
//  - open loop: Poisson arrivals at `load` x capacity (C / S);
//  - keep-alive: `clients` connections, each sends its next request the moment
//    the previous response completes. The limit caps connections: a client
//    refused (shed) retries after `retry_after`.
//
// Every tick the service reports what the kernel signal would: a quantile of
// the response times (arrival to first response byte, queueing included)
// completed within a sliding window, completions in the tick, in-flight and
// sheds. Time is simulated; nothing sleeps.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <queue>
#include <random>
#include <vector>

namespace edgeshed::sim {

using Seconds = std::chrono::duration<double>;

// kBimodal: service_time, or long_time for a long_share of the requests (a
// heavy tail: most requests short, a few a hundred times longer).
enum class ServiceTimes { kFixed, kExponential, kBimodal };

struct SimConfig {
  uint32_t workers = 10;
  Seconds service_time{0.020};
  ServiceTimes distribution = ServiceTimes::kFixed;
  double long_share = 0.1;   // kBimodal only
  Seconds long_time{0.100};  // kBimodal only
  double load = 1.0;         // open loop: offered rate as a multiple of capacity
  // Keep-alive model when set: this many client connections, back to back.
  std::optional<uint32_t> clients;
  uint32_t requests_per_connection = 10;  // keep-alive: then it reconnects
  Seconds retry_after{0.050};             // keep-alive: a shed client retries after this
  Seconds tick{0.100};
  // The latency signal: this quantile of the response times completed in the
  // last `window`.
  Seconds window{0.500};
  double quantile = 0.5;
  uint32_t seed = 1;
};

// What the law is given each tick.
struct SimTick {
  Seconds now{0};
  Seconds interval{0};
  std::optional<double> latency_seconds;  // empty: nothing completed in the window
  uint64_t completions = 0;               // in this tick
  uint32_t inflight = 0;                  // at the tick
  uint64_t sheds = 0;                     // in this tick
  std::optional<double> tail_seconds;     // the p99 of the same window
  uint64_t gate_sheds = 0;                // in this tick, by the queue gate
  bool queued = false;                    // the queue gate's evidence at the tick
};

// What the test measures afterwards.
struct SimCompletion {
  double arrived;  // seconds
  double latency;  // seconds
};

struct SimTickRecord {
  double at;  // seconds
  uint32_t limit;
  uint64_t completions;
  uint64_t sheds;
  uint32_t inflight;
};

class SimService {
 public:
  explicit SimService(const SimConfig& config);

  // Called at every tick; returns the limit for the next tick.
  using Law = std::function<uint32_t(const SimTick&)>;

  void run(Seconds duration, const Law& law);

  // Changes take effect from now. Fewer workers: busy ones finish their job.
  void set_load(double load);
  void set_workers(uint32_t workers);
  void set_service_time(Seconds service_time);
  void set_limit(uint32_t limit) { limit_ = limit; }
  // The data plane's queue gate (abi.h): new connections are shed while
  // most requests that entered service in the two slices just older than
  // the age are still in service. Empty: no gate.
  void set_queue_age(std::optional<Seconds> age) { queue_age_ = age; }
  // Requests already queued inside the server (arrived now), e.g. the backlog
  // of an overload the law starts in the middle of.
  void add_backlog(uint32_t requests);

  double now() const { return now_; }
  double capacity_per_second() const { return workers_ / mean_service_time(); }
  double mean_service_time() const;
  // Connections shed by the queue gate, all told.
  uint64_t gate_sheds() const { return gate_sheds_total_; }
  const std::vector<SimCompletion>& completions() const { return completions_; }
  const std::vector<SimTickRecord>& ticks() const { return ticks_; }

 private:
  uint32_t inflight() const;
  // A request enters service now: its id, for its completion.
  uint64_t enter();
  bool gate_shut() const;
  void arrive();
  void connect();
  void complete();
  void start_waiting();
  double draw_service_time();
  void schedule_arrival();
  void tick(const Law& law);

  SimConfig config_;
  std::mt19937_64 random_;
  double now_ = 0.0;
  double next_tick_;
  double next_arrival_ = 0.0;
  uint32_t workers_;
  double service_time_;
  double load_;
  uint32_t limit_ = 0xffffffffu;

  struct Request {
    double arrived;
    uint32_t left = 0;  // keep-alive: requests the connection still sends after this one
    uint64_t id = 0;    // in entered_
  };
  struct Busy {
    double done;
    Request request;
    bool operator>(const Busy& other) const { return done > other.done; }
  };
  std::priority_queue<Busy, std::vector<Busy>, std::greater<>> busy_;
  std::deque<Request> waiting_;  // FIFO
  // Keep-alive clients that were shed, by the time they retry.
  std::priority_queue<double, std::vector<double>, std::greater<>> retries_;
  uint32_t connections_ = 0;  // keep-alive: admitted client connections

  struct Done {
    double at;
    double latency;
  };
  std::deque<Done> window_;  // by completion time
  // Requests by the time they entered service, and when they left it (kNever
  // while in service), for the queue gate: entered_[id - first_entered_].
  struct Entered {
    double at;
    double left;
  };
  std::deque<Entered> entered_;
  uint64_t first_entered_ = 0;
  std::optional<Seconds> queue_age_;
  uint64_t gate_sheds_this_tick_ = 0;
  uint64_t gate_sheds_total_ = 0;
  uint64_t completions_this_tick_ = 0;
  uint64_t sheds_this_tick_ = 0;
  std::vector<SimCompletion> completions_;
  std::vector<SimTickRecord> ticks_;
};

// The p-quantile (nearest rank) of the latencies of completions that arrived
// in [from, to), in seconds; 0 when there are none.
double latency_quantile(const std::vector<SimCompletion>& completions, double from, double to,
                        double p);

// Shorthand for the response-time quantile an unloaded service gives: the
// quantile of its service time (fixed: S; exponential: -S ln(1 - p)).
double unloaded_quantile(const SimConfig& config, double p);

}  // namespace edgeshed::sim
