// What loadgen offers and when, without sockets: the parsers of its option
// values, the arrival schedule (fixed interval, Poisson, ramp, burst) and the
// class picker. Unit tests drive all of it directly.
#pragma once

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace edgeshed::loadgen {

// A parsed value, or the reason it could not be parsed.
template <class T>
struct Parsed {
  std::optional<T> value;
  std::string error;

  explicit operator bool() const { return value.has_value(); }
  const T& operator*() const { return *value; }
  const T* operator->() const { return &*value; }
};

template <class T>
Parsed<T> parse_error(std::string message) {
  return Parsed<T>{std::nullopt, std::move(message)};
}

inline std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

inline std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t from = 0;
  while (true) {
    size_t at = s.find(sep, from);
    parts.push_back(
        s.substr(from, at == std::string_view::npos ? std::string_view::npos : at - from));
    if (at == std::string_view::npos) return parts;
    from = at + 1;
  }
}

// A finite number with nothing after it. from_chars, unlike strtod, ignores
// the locale and does not accept "inf", "nan" or trailing garbage.
inline std::optional<double> to_number(std::string_view s) {
  s = trim(s);
  if (s.empty()) return std::nullopt;
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// "5s", "500ms", "2m" or a bare number of seconds.
inline Parsed<double> parse_duration_s(std::string_view text) {
  std::string_view s = trim(text);
  double scale = 1;
  if (s.ends_with("ms")) {
    scale = 0.001;
    s.remove_suffix(2);
  } else if (s.ends_with("s")) {
    s.remove_suffix(1);
  } else if (s.ends_with("m")) {
    scale = 60;
    s.remove_suffix(1);
  }
  auto v = to_number(s);
  if (!v || *v < 0) return parse_error<double>("'" + std::string(text) + "' is not a duration");
  return Parsed<double>{*v * scale, {}};
}

inline bool valid_class_name(std::string_view name) {
  if (name.empty() || name.size() > 32) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
}

// NAME=VALUE, as in --class-port critical=443.
inline Parsed<std::pair<std::string, std::string>> parse_name_value(std::string_view text) {
  using Pair = std::pair<std::string, std::string>;
  size_t eq = text.find('=');
  if (eq == std::string_view::npos) {
    return parse_error<Pair>("'" + std::string(text) + "' is not NAME=VALUE");
  }
  std::string_view name = trim(text.substr(0, eq));
  std::string_view value = trim(text.substr(eq + 1));
  if (!valid_class_name(name)) {
    return parse_error<Pair>("'" + std::string(name) + "' is not a class name ([A-Za-z0-9_-])");
  }
  if (value.empty()) return parse_error<Pair>("'" + std::string(text) + "' has no value");
  return Parsed<Pair>{Pair(std::string(name), std::string(value)), {}};
}

inline Parsed<uint16_t> parse_port(std::string_view text) {
  std::string_view s = trim(text);
  unsigned v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || v == 0 || v > 65535) {
    return parse_error<uint16_t>("'" + std::string(text) + "' is not a port (1-65535)");
  }
  return Parsed<uint16_t>{static_cast<uint16_t>(v), {}};
}

struct ClassShare {
  std::string name;
  double share = 0;
};

// "critical=0.1,normal=0.6,background=0.3". Shares are weights: they are
// normalised later, so "1,6,3" means the same. Zero is allowed (a class that is
// defined but gets no traffic); all zero is not.
inline Parsed<std::vector<ClassShare>> parse_class_mix(std::string_view text) {
  using Mix = std::vector<ClassShare>;
  Mix mix;
  double total = 0;
  for (std::string_view item : split(text, ',')) {
    auto nv = parse_name_value(item);
    if (!nv) return parse_error<Mix>("--class-mix: " + nv.error);
    auto share = to_number(nv->second);
    if (!share || *share < 0) {
      return parse_error<Mix>("--class-mix: share '" + nv->second + "' of " + nv->first +
                              " is not a number >= 0");
    }
    for (const ClassShare& c : mix) {
      if (c.name == nv->first) return parse_error<Mix>("--class-mix: " + c.name + " given twice");
    }
    mix.push_back({nv->first, *share});
    total += *share;
  }
  if (total <= 0) return parse_error<Mix>("--class-mix: the shares add up to zero");
  return Parsed<Mix>{std::move(mix), {}};
}

struct Phase {
  double rate = 0;  // requests per second
  double duration_s = 0;
  std::string label;  // as written: "3x" or "800"
};

// "0.5x:5s,3x:10s,0.5x:10s": each phase is a rate, as a multiple of
// `capacity` (the "x" form) or in requests per second, and a duration.
inline Parsed<std::vector<Phase>> parse_ramp(std::string_view text,
                                             std::optional<double> capacity) {
  using Phases = std::vector<Phase>;
  Phases phases;
  for (std::string_view item : split(text, ',')) {
    item = trim(item);
    size_t colon = item.find(':');
    if (colon == std::string_view::npos) {
      return parse_error<Phases>("--ramp: '" + std::string(item) + "' is not RATE:DURATION");
    }
    std::string_view rate_text = trim(item.substr(0, colon));
    Phase phase;
    phase.label = std::string(rate_text);
    bool multiple = rate_text.ends_with('x');
    if (multiple) rate_text.remove_suffix(1);
    auto rate = to_number(rate_text);
    if (!rate || *rate < 0) {
      return parse_error<Phases>("--ramp: rate '" + phase.label + "' is not a number >= 0");
    }
    if (multiple) {
      if (!capacity || *capacity <= 0) {
        return parse_error<Phases>("--ramp: '" + phase.label + "' needs --capacity");
      }
      phase.rate = *rate * *capacity;
    } else {
      phase.rate = *rate;
    }
    auto duration = parse_duration_s(item.substr(colon + 1));
    if (!duration) return parse_error<Phases>("--ramp: " + duration.error);
    if (*duration <= 0) return parse_error<Phases>("--ramp: a phase must last more than 0 s");
    phase.duration_s = *duration;
    phases.push_back(std::move(phase));
  }
  return Parsed<Phases>{std::move(phases), {}};
}

struct Arrival {
  double t_s = 0;  // since the start of the run
  uint16_t phase = 0;
};

// When each request starts. It depends on the clock only, never on answers:
// that is what makes the load open-loop.
class ArrivalSchedule {
 public:
  // Phases in order; each has its own rate. Fixed spacing puts arrival j of a
  // phase at start + j / rate, computed from j rather than accumulated, so a
  // long run does not drift. Poisson draws exponential gaps; when a gap crosses
  // into the next phase the draw restarts at the boundary at the new rate,
  // which is exact for a piecewise-constant Poisson process (memorylessness).
  ArrivalSchedule(std::vector<Phase> phases, bool poisson, uint64_t seed)
      : phases_(std::move(phases)), poisson_(poisson), rng_(seed) {
    skip_empty_phases();
  }

  // `n` arrivals at time zero.
  static ArrivalSchedule burst(uint64_t n) {
    ArrivalSchedule s({}, false, 0);
    s.burst_left_ = n;
    return s;
  }

  std::optional<Arrival> next() {
    if (burst_left_ > 0) {
      --burst_left_;
      return Arrival{0, 0};
    }
    while (phase_ < phases_.size()) {
      const Phase& p = phases_[phase_];
      double t = poisson_ ? poisson_t_ + gap(p.rate) : phase_start_ + j_ / p.rate;
      if (t < phase_start_ + p.duration_s) {
        ++j_;
        poisson_t_ = t;
        return Arrival{t, static_cast<uint16_t>(phase_)};
      }
      phase_start_ += p.duration_s;
      ++phase_;
      j_ = 0;
      poisson_t_ = phase_start_;
      skip_empty_phases();
    }
    return std::nullopt;
  }

  // Where the schedule ends (the sum of the phase durations).
  double end_s() const {
    double end = 0;
    for (const Phase& p : phases_) end += p.duration_s;
    return end;
  }

 private:
  double gap(double rate) { return std::exponential_distribution<double>(rate)(rng_); }

  void skip_empty_phases() {
    while (phase_ < phases_.size() && phases_[phase_].rate <= 0) {
      phase_start_ += phases_[phase_].duration_s;
      ++phase_;
    }
    poisson_t_ = phase_start_;
  }

  std::vector<Phase> phases_;
  bool poisson_ = false;
  std::mt19937_64 rng_;
  size_t phase_ = 0;
  double phase_start_ = 0;
  double poisson_t_ = 0;
  uint64_t j_ = 0;
  uint64_t burst_left_ = 0;
};

// Deals classes out in proportion to their shares, deterministically and
// interleaved (smooth weighted round robin): each pick adds every class's
// share to its credit and takes the class with the most credit. After n
// picks every class has had its share of n to within one request, so a run of
// 1000 with 0.1/0.6/0.3 offers exactly 100/600/300, and a short run or a ramp
// phase sees the mix too, not a random walk around it.
class ClassPicker {
 public:
  explicit ClassPicker(std::vector<double> shares) : shares_(std::move(shares)) {
    double total = 0;
    for (double s : shares_) total += s;
    for (double& s : shares_) s = total > 0 ? s / total : 0;
    credit_.assign(shares_.size(), 0.0);
  }

  size_t next() {
    size_t best = 0;
    for (size_t i = 0; i < shares_.size(); ++i) {
      credit_[i] += shares_[i];
      if (credit_[i] > credit_[best] + 1e-12) best = i;
    }
    credit_[best] -= 1.0;
    return best;
  }

 private:
  std::vector<double> shares_;
  std::vector<double> credit_;
};

}  // namespace edgeshed::loadgen
