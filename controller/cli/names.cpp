#include "cli/names.h"

#include "common/names.h"
#include "edgeshed/abi.h"

// The tables are common/names.h's; these are the CLI's uint32_t-typed views.
namespace edgeshed {

std::optional<uint32_t> parse_class(std::string_view n) { return names::find(names::kClasses, n); }
std::string_view class_name(uint32_t c) { return names::name_of(names::kClasses, c); }
std::optional<uint32_t> parse_mode(std::string_view n) { return names::find(names::kModes, n); }
std::string_view mode_name(uint32_t m) { return names::name_of(names::kModes, m); }
std::optional<uint32_t> parse_action(std::string_view n) { return names::find(names::kActions, n); }
std::string_view action_name(uint32_t a) { return names::name_of(names::kActions, a); }
std::optional<uint32_t> parse_draw(std::string_view n) { return names::find(names::kDraws, n); }
std::string_view draw_name(uint32_t d) { return names::name_of(names::kDraws, d); }
std::string_view counter_name(int c) {
  return names::name_of(names::kCounters, static_cast<uint64_t>(c));
}
std::string_view global_counter_name(int c) {
  return names::name_of(names::kGlobalCounters, static_cast<uint64_t>(c));
}
std::string_view reason_name(uint32_t r) { return names::name_of(names::kReasons, r); }
std::string_view outcome_name(uint32_t o) { return names::name_of(names::kOutcomes, o); }

}  // namespace edgeshed
