// Reading the kind-specific keys of a [[signal]] table (SignalConfig::params)
// for the sources that check their own keys. Like the config parser, it
// collects every problem of the table, one per line, each starting with
// SignalConfig::locate(key), and rejects keys it does not know: a misspelt
// key that silently does nothing is worse than a refusal to start.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "config/config.h"
#include "config/signal_table.h"

namespace edgeshed::signals {

// A name a key may be given, and what it means to the kind: a kind's key
// has one table of these, so a choice added there is read, listed in the
// error for a wrong one, and mapped to its meaning.
template <class T>
struct Choice {
  std::string_view name;
  T value;
};
template <class T, std::size_t N>
using Choices = std::array<Choice<T>, N>;

class ParamReader {
 public:
  // `allowed`: every key the kind takes; the kind is the config's.
  ParamReader(const config::SignalConfig& cfg, std::initializer_list<std::string_view> allowed);

  bool has(std::string_view key) const { return keys().contains(key); }

  // Each returns the default (or nullopt) when the key is absent, and
  // records an error when it is present but wrong.
  std::optional<std::string> string(std::string_view key, bool required = false);
  std::chrono::nanoseconds duration(std::string_view key, std::chrono::nanoseconds fallback,
                                    std::chrono::nanoseconds min, std::chrono::nanoseconds max);
  int64_t integer(std::string_view key, int64_t fallback, int64_t min, int64_t max,
                  bool required = false);
  // A finite number in [min, max].
  std::optional<double> number(std::string_view key, double min, double max);
  // The value of the choice `key` names; `fallback` when absent (nullopt:
  // required). A name not in `choices` is an error that lists them.
  template <class T, std::size_t N>
  T choice(std::string_view key, const Choices<T, N>& choices, std::optional<T> fallback) {
    std::array<std::string_view, N> names;
    for (std::size_t i = 0; i < N; ++i) names[i] = choices[i].name;
    const auto index = choice_index(key, names, !fallback.has_value());
    if (index) return choices[*index].value;
    return fallback.value_or(choices[0].value);
  }
  const toml::table* table(std::string_view key);

  // "<file>:<line>:<col>: signal[N].<key> = <value>: <message>"
  void invalid(std::string_view key, std::string_view message);
  // For a rule between keys, reported at the first of them.
  void error(std::string message) { errors_.push_back(std::move(message)); }

  // For sources that measure every `interval` on their own thread: a
  // stale_after below interval + timeout would make each sample go stale
  // before the next one could arrive.
  void check_stale_after(std::chrono::nanoseconds interval, std::chrono::nanoseconds timeout);

  // `interval` and `timeout` of a periodic source: a timeout longer than the
  // interval is refused, an absent one is capped at the interval, and
  // stale_after is checked against both. Updates the two in place.
  void periodic(std::chrono::nanoseconds& interval, std::chrono::nanoseconds& timeout);

  const config::SignalConfig& config() const { return cfg_; }
  bool ok() const { return errors_.empty(); }
  Status finish() const;

 private:
  void missing(std::string_view key);
  // The index in `names` of the name `key` has; nullopt when absent or wrong.
  std::optional<std::size_t> choice_index(std::string_view key,
                                          std::span<const std::string_view> names, bool required);
  const toml::table& keys() const { return config::signal_keys(cfg_); }

  const config::SignalConfig& cfg_;
  std::vector<std::string> errors_;
};

}  // namespace edgeshed::signals
