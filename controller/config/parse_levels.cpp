// [levels]: the pressure thresholds of each level and how they relate.
#include <array>
#include <optional>
#include <string>

#include "config/parse_sections.h"

namespace edgeshed::config::sections {

using std::chrono::minutes;
using std::chrono::nanoseconds;

namespace {

struct LevelKeys {
  std::optional<TableReader> elevated;
  std::optional<TableReader> high;
  std::optional<TableReader> critical;

  std::optional<TableReader>& of(law::Level level) {
    return level == law::Level::kElevated ? elevated : level == law::Level::kHigh ? high : critical;
  }
};

}  // namespace

void parse_levels(TableReader& reader, law::LevelMachineConfig& levels) {
  reader.integer("enter_after", levels.enter_after, 1, 100);
  reader.integer("critical_enter_after", levels.critical_enter_after, 1, 100);
  reader.duration("exit_after", levels.exit_after, nanoseconds(0), minutes(10),
                  /*zero_allowed=*/true);

  LevelKeys keys;
  bool thresholds_valid = true;  // relations are checked only between valid values
  for (law::Level level : {law::Level::kElevated, law::Level::kHigh, law::Level::kCritical}) {
    const std::string name(names::name_of(level));
    const toml::table* table = reader.table(name);
    if (table == nullptr) continue;
    std::optional<TableReader>& level_reader = keys.of(level);
    level_reader.emplace(reader.errors(), *table, reader.path_of(name));
    law::LevelThreshold& threshold = level == law::Level::kElevated ? levels.elevated
                                     : level == law::Level::kHigh   ? levels.high
                                                                    : levels.critical;
    if (!level_reader->number("enter", threshold.enter, 0.0, 100.0, Bounds::kOpenMin)) {
      thresholds_valid = thresholds_valid && !table->contains("enter");
    }
    if (!level_reader->number("exit", threshold.exit, 0.0, 100.0, Bounds::kOpenMin)) {
      thresholds_valid = thresholds_valid && !table->contains("exit");
    }
    level_reader->reject_unknown_keys();
  }
  reader.reject_unknown_keys();
  if (!thresholds_valid) return;

  // Reports a broken relation at the key the user wrote (the default being
  // the other side), preferring `key` when both were written.
  auto report = [&](law::Level level, std::string_view key, const std::string& problem,
                    law::Level other_level, std::string_view other_key,
                    const std::string& other_problem) {
    std::optional<TableReader>& first = keys.of(level);
    std::optional<TableReader>& second = keys.of(other_level);
    if (first && first->source_table().contains(key)) {
      first->invalid(key, problem);
    } else if (second && second->source_table().contains(other_key)) {
      second->invalid(other_key, other_problem);
    }
  };
  auto path = [&](law::Level level, std::string_view key) {
    return reader.path_of(std::string(names::name_of(level)) + "." + std::string(key));
  };
  const std::array<law::Level, 3> ordered = {law::Level::kElevated, law::Level::kHigh,
                                             law::Level::kCritical};
  for (law::Level level : ordered) {
    const law::LevelThreshold& t = levels.threshold(level);
    if (!(t.exit < t.enter)) {
      report(level, "exit",
             "must be < " + path(level, "enter") + " (" + format_number(t.enter) + ")", level,
             "enter", "must be > " + path(level, "exit") + " (" + format_number(t.exit) + ")");
    }
  }
  for (std::size_t i = 1; i < ordered.size(); ++i) {
    const law::Level lower = ordered[i - 1];
    const law::Level upper = ordered[i];
    const double lower_enter = levels.threshold(lower).enter;
    const double upper_enter = levels.threshold(upper).enter;
    if (!(upper_enter > lower_enter)) {
      report(upper, "enter",
             "must be > " + path(lower, "enter") + " (" + format_number(lower_enter) + ")", lower,
             "enter",
             "must be < " + path(upper, "enter") + " (" + format_number(upper_enter) + ")");
    }
  }
}

}  // namespace edgeshed::config::sections
