#include "common/duration.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <utility>

namespace edgeshed {

namespace {

struct Unit {
  std::string_view suffix;
  int64_t nanoseconds;
};

// Longest suffixes first so that "ms" is not read as "m" followed by junk.
constexpr std::array<Unit, 5> kUnits = {{
    {"us", 1'000},
    {"ms", 1'000'000},
    {"s", 1'000'000'000},
    {"m", 60'000'000'000},
    {"h", 3'600'000'000'000},
}};

constexpr std::string_view kExpected =
    "expected a number and a unit (us, ms, s, m, h), e.g. \"100ms\"";

}  // namespace

Result<std::chrono::nanoseconds> parse_duration(std::string_view text) {
  if (text == "0") return std::chrono::nanoseconds(0);
  // A duration is a length of time: "-1s" is not a number the rest of the
  // parse would name, so it is refused for what it is.
  if (text.starts_with('-')) return make_error("negative durations are not allowed");
  std::size_t digits_end = 0;
  bool seen_digit = false;
  bool seen_point = false;
  for (; digits_end < text.size(); ++digits_end) {
    const char c = text[digits_end];
    if (c >= '0' && c <= '9') {
      seen_digit = true;
    } else if (c == '.' && !seen_point) {
      seen_point = true;
    } else {
      break;
    }
  }
  const std::string_view number = text.substr(0, digits_end);
  const std::string_view suffix = text.substr(digits_end);
  if (!seen_digit || number.back() == '.' || number.front() == '.') {
    return make_error(std::string(kExpected));
  }
  for (const Unit& unit : kUnits) {
    if (suffix != unit.suffix) continue;
    double magnitude = 0.0;
    // Digits and one point only, so this parses; from_chars ignores the locale.
    std::from_chars(number.data(), number.data() + number.size(), magnitude);
    const double value = magnitude * static_cast<double>(unit.nanoseconds);
    if (value > 1e18) return make_error("too long");
    const double rounded = std::round(value);
    if (rounded != value) {
      return make_error("finer than one nanosecond");
    }
    return std::chrono::nanoseconds(static_cast<int64_t>(rounded));
  }
  return make_error(std::string(kExpected));
}

std::string format_duration(std::chrono::nanoseconds duration) {
  const int64_t ns = duration.count();
  if (ns == 0) return "0s";
  // Largest unit first. Not std::ranges::reverse_view: clang 14 (the fuzz
  // build, clang-tidy) cannot compile libstdc++ 12's ranges.
  for (auto unit = kUnits.rbegin(); unit != kUnits.rend(); ++unit) {
    if (ns % unit->nanoseconds == 0) {
      return std::to_string(ns / unit->nanoseconds) + std::string(unit->suffix);
    }
  }
  return std::to_string(ns) + "ns";
}

}  // namespace edgeshed
