// Vocabulary of the control law: pressure levels, traffic classes and modes.
// Their names are common/names.h's tables, bound here to the enums: use
// names::name_of(level), names::parse<law::Level>(text).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/names.h"
#include "edgeshed/abi.h"

namespace edgeshed::law {

enum class Level { kNormal = 0, kElevated = 1, kHigh = 2, kCritical = 3 };

// Values are the ABI's class ids, so a class indexes ABI arrays directly.
enum class TrafficClass {
  kCritical = EDGESHED_CLASS_CRITICAL,
  kNormal = EDGESHED_CLASS_NORMAL,
  kBackground = EDGESHED_CLASS_BACKGROUND,
};

enum class Mode {
  kOff = EDGESHED_MODE_OFF,
  kObserve = EDGESHED_MODE_OBSERVE,
  kEnforce = EDGESHED_MODE_ENFORCE,
};

using names::operator<<;

}  // namespace edgeshed::law

namespace edgeshed::names {

template <>
struct TableOf<law::Level> {
  static constexpr const auto& kNames = kLevels;
  static constexpr std::string_view kWhat = "level";
};
template <>
struct TableOf<law::TrafficClass> {
  static constexpr const auto& kNames = kClasses;
  static constexpr std::string_view kWhat = "class";
};
template <>
struct TableOf<law::Mode> {
  static constexpr const auto& kNames = kModes;
  static constexpr std::string_view kWhat = "mode";
};

}  // namespace edgeshed::names

namespace edgeshed::law {

// A value added to the table (or the ABI) is a build error until the enum has it.
static_assert(names::ends_at(Level::kCritical));
static_assert(names::ends_at(TrafficClass::kBackground));
static_assert(names::ends_at(Mode::kEnforce));

inline constexpr auto kAllLevels = names::all_values<Level>();
inline constexpr std::size_t kNumLevels = kAllLevels.size();
inline constexpr auto kAllClasses = names::all_values<TrafficClass>();
inline constexpr std::size_t kNumClasses = kAllClasses.size();
static_assert(kNumClasses == EDGESHED_NUM_CLASSES);

constexpr std::size_t index_of(Level level) { return static_cast<std::size_t>(level); }
constexpr std::size_t index_of(TrafficClass traffic_class) {
  return static_cast<std::size_t>(traffic_class);
}

}  // namespace edgeshed::law
