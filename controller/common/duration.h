// Durations as the config file writes them: "250us", "100ms", "3s", "1.5m", "1h".
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "common/result.h"

namespace edgeshed {

// A non-negative decimal number followed by a unit (us, ms, s, m, h); "0"
// alone is also accepted. Resolution is one nanosecond. The error says what
// is wrong, without repeating the text: callers add where it came from.
Result<std::chrono::nanoseconds> parse_duration(std::string_view text);

// The shortest exact form in the largest unit that fits: 100ms, 3s, 1m, 1500us.
std::string format_duration(std::chrono::nanoseconds duration);

}  // namespace edgeshed
