// Vocabulary of the control law: pressure levels, traffic classes and modes,
// with the names the config file and the CLI use for them.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string_view>

#include "common/result.h"
#include "edgeshed/abi.h"

namespace edgeshed::law {

enum class Level { kNormal = 0, kElevated = 1, kHigh = 2, kCritical = 3 };
inline constexpr std::size_t kNumLevels = 4;
inline constexpr std::array<Level, kNumLevels> kAllLevels = {Level::kNormal, Level::kElevated,
                                                             Level::kHigh, Level::kCritical};

// Values are the ABI's class ids, so a class indexes ABI arrays directly.
enum class TrafficClass {
  kCritical = EDGESHED_CLASS_CRITICAL,
  kNormal = EDGESHED_CLASS_NORMAL,
  kBackground = EDGESHED_CLASS_BACKGROUND,
};
inline constexpr std::size_t kNumClasses = EDGESHED_NUM_CLASSES;
inline constexpr std::array<TrafficClass, kNumClasses> kAllClasses = {
    TrafficClass::kCritical, TrafficClass::kNormal, TrafficClass::kBackground};

enum class Mode {
  kOff = EDGESHED_MODE_OFF,
  kObserve = EDGESHED_MODE_OBSERVE,
  kEnforce = EDGESHED_MODE_ENFORCE,
};

constexpr std::size_t index_of(Level level) { return static_cast<std::size_t>(level); }
constexpr std::size_t index_of(TrafficClass traffic_class) {
  return static_cast<std::size_t>(traffic_class);
}

std::string_view to_string(Level level);
std::string_view to_string(TrafficClass traffic_class);
std::string_view to_string(Mode mode);

std::ostream& operator<<(std::ostream& out, Level level);
std::ostream& operator<<(std::ostream& out, TrafficClass traffic_class);
std::ostream& operator<<(std::ostream& out, Mode mode);

// Accept exactly the names to_string gives; the error lists the valid ones.
Result<Level> parse_level(std::string_view text);
Result<TrafficClass> parse_traffic_class(std::string_view text);
Result<Mode> parse_mode(std::string_view text);

}  // namespace edgeshed::law
