#include "law/types.h"

#include <string>

#include "common/names.h"

namespace edgeshed::law {

// The names live in common/names.h, indexed by the enums' values.
static_assert(names::kLevels.size() == kNumLevels);
static_assert(names::kClasses.size() == kNumClasses);

std::string_view to_string(Level level) { return names::name_of(names::kLevels, index_of(level)); }

std::string_view to_string(TrafficClass traffic_class) {
  return names::name_of(names::kClasses, index_of(traffic_class));
}

std::string_view to_string(Mode mode) {
  return names::name_of(names::kModes, static_cast<std::size_t>(mode));
}

std::ostream& operator<<(std::ostream& out, Level level) { return out << to_string(level); }

std::ostream& operator<<(std::ostream& out, TrafficClass traffic_class) {
  return out << to_string(traffic_class);
}

std::ostream& operator<<(std::ostream& out, Mode mode) { return out << to_string(mode); }

namespace {

template <class Enum, std::size_t N>
Result<Enum> parse_named(std::string_view text, const std::array<Enum, N>& values,
                         std::string_view what) {
  std::string names;
  for (Enum value : values) {
    if (to_string(value) == text) return value;
    if (!names.empty()) names += ", ";
    names += to_string(value);
  }
  return make_error("unknown " + std::string(what) + " \"" + std::string(text) +
                    "\" (expected one of: " + names + ")");
}

}  // namespace

Result<Level> parse_level(std::string_view text) { return parse_named(text, kAllLevels, "level"); }

Result<TrafficClass> parse_traffic_class(std::string_view text) {
  return parse_named(text, kAllClasses, "class");
}

Result<Mode> parse_mode(std::string_view text) {
  constexpr std::array<Mode, 3> kAllModes = {Mode::kOff, Mode::kObserve, Mode::kEnforce};
  return parse_named(text, kAllModes, "mode");
}

}  // namespace edgeshed::law
