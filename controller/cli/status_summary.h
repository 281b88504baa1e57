// `edgeshed status` on one 80-column screen: what is protected, the limit
// and why, the level, what is shed and why, and the measured p99. The full
// listing (every signal, counter and setting) is status_lines(), shown by
// --verbose; the JSON has it all.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace edgeshed {

inline constexpr size_t kSummaryWidth = 80;

// Lines of at most kSummaryWidth columns (a word longer than that, such as
// a path, stands alone on its line).
std::vector<std::string> status_summary(const nlohmann::ordered_json& status);

// text cut into lines of at most width columns at spaces; the first starts
// with first_indent, the rest with indent.
std::vector<std::string> wrap(const std::string& text, size_t width,
                              const std::string& first_indent, const std::string& indent);

}  // namespace edgeshed
