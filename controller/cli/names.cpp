#include "cli/names.h"

#include <array>

#include "edgeshed/abi.h"
#include "law/types.h"

namespace edgeshed {
namespace {

constexpr std::array<std::string_view, EDGESHED_NUM_ACTIONS> kActions = {"drop", "rst"};
constexpr std::array<std::string_view, EDGESHED_NUM_DRAWS> kDraws = {"source_hash", "random"};
constexpr std::array<std::string_view, EDGESHED_NUM_COUNTERS> kCounters = {
    "admitted",        "shed_cap",       "shed_fraction",
    "shed_rate",       "would_shed_cap", "would_shed_fraction",
    "would_shed_rate", "fail_open",      "pass_mode_off",
    "rst_sent",        "rst_capped"};
constexpr std::array<std::string_view, EDGESHED_NUM_GLOBAL_COUNTERS> kGlobalCounters = {
    "unparsed",      "fragment", "unprotected",   "no_policy",   "rst_failed",   "events_lost",
    "rst_not_unicast", "rst_not_to_host", "shed_fragment", "too_deep", "shed_too_deep", "bad_checksum"};
constexpr std::array<std::string_view, 4> kReasons = {"none", "cap", "fraction", "rate"};
constexpr std::array<std::string_view, EDGESHED_NUM_EVENT_OUTCOMES> kOutcomes = {
    "drop", "rst", "rst_capped", "would_shed"};

template <size_t N>
std::optional<uint32_t> find(const std::array<std::string_view, N>& names, std::string_view name) {
  for (size_t i = 0; i < N; ++i)
    if (names[i] == name) return static_cast<uint32_t>(i);
  return std::nullopt;
}

template <size_t N>
std::string_view name_of(const std::array<std::string_view, N>& names, uint64_t i) {
  if (i < N) return names[i];
  return "unknown";
}

}  // namespace

// Classes and modes are named by the control law's vocabulary.
std::optional<uint32_t> parse_class(std::string_view n) {
  auto c = law::parse_traffic_class(n);
  return c ? std::optional<uint32_t>(static_cast<uint32_t>(*c)) : std::nullopt;
}
std::string_view class_name(uint32_t c) {
  return c < EDGESHED_NUM_CLASSES ? law::to_string(static_cast<law::TrafficClass>(c)) : "unknown";
}
std::optional<uint32_t> parse_mode(std::string_view n) {
  auto m = law::parse_mode(n);
  return m ? std::optional<uint32_t>(static_cast<uint32_t>(*m)) : std::nullopt;
}
std::string_view mode_name(uint32_t m) {
  return m < EDGESHED_NUM_MODES ? law::to_string(static_cast<law::Mode>(m)) : "unknown";
}
std::optional<uint32_t> parse_action(std::string_view n) { return find(kActions, n); }
std::string_view action_name(uint32_t a) { return name_of(kActions, a); }
std::optional<uint32_t> parse_draw(std::string_view n) { return find(kDraws, n); }
std::string_view draw_name(uint32_t d) { return name_of(kDraws, d); }
std::string_view counter_name(int c) { return name_of(kCounters, static_cast<uint64_t>(c)); }
std::string_view global_counter_name(int c) {
  return name_of(kGlobalCounters, static_cast<uint64_t>(c));
}

std::string_view reason_name(uint32_t r) { return name_of(kReasons, r); }
std::string_view outcome_name(uint32_t o) { return name_of(kOutcomes, o); }

}  // namespace edgeshed
