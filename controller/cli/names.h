// Operator-facing names of the ABI's enums, parsed and printed in one place.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace edgeshed {

std::optional<uint32_t> parse_class(std::string_view name);
std::string_view class_name(uint32_t class_id);
std::optional<uint32_t> parse_mode(std::string_view name);
std::string_view mode_name(uint32_t mode);
std::optional<uint32_t> parse_action(std::string_view name);
std::string_view action_name(uint32_t action);
std::optional<uint32_t> parse_draw(std::string_view name);
std::string_view draw_name(uint32_t draw);
std::string_view counter_name(int counter);
std::string_view global_counter_name(int counter);
std::string_view reason_name(uint32_t reason);    // enum edgeshed_shed_reason
std::string_view outcome_name(uint32_t outcome);  // enum edgeshed_event_outcome

}  // namespace edgeshed
