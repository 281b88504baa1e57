#include "cli/usage_message.h"

#include <regex>

namespace edgeshed {
namespace {

// "0.000000" -> "0", "1.500000" -> "1.5": CLI11 prints a range's ends with
// std::to_string.
std::string plain_number(std::string text) {
  if (text.find('.') == std::string::npos) return text;
  while (!text.empty() && text.back() == '0') text.pop_back();
  if (!text.empty() && text.back() == '.') text.pop_back();
  return text;
}

}  // namespace

std::string usage_message(const std::string& message) {
  static const std::regex kRange(R"(^(\S+): Value (.*) not in range (\S+) to (\S+)$)");
  static const std::regex kConvert(R"(^(\S+): (?:Could not convert|Failed to convert): ?(.*)$)");
  std::smatch m;
  if (std::regex_match(message, m, kRange)) {
    return m[1].str() + " '" + m[2].str() + "': expected a number in " + plain_number(m[3].str()) +
           ".." + plain_number(m[4].str());
  }
  if (std::regex_match(message, m, kConvert)) {
    return m[1].str() + " '" + m[2].str() + "': expected a number";
  }
  return message;
}

}  // namespace edgeshed
