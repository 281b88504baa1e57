// The table of signal kinds: the name a [[signal]]'s `kind` gives, and the
// kind's descriptor (signal_kind.h). The config parser, the signal set, the
// README's table of kinds and the config fuzz target all read it, so a new
// kind is its own file plus one line in signal_kinds.cpp.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "common/result.h"
#include "config/config.h"
#include "signals/signal_kind.h"

namespace edgeshed::signals {

struct SignalKindEntry {
  std::string_view name;
  const SignalKindDescriptor& kind;
};

// In the order the config's error for an unknown kind lists them.
std::span<const SignalKindEntry> signal_kinds();
// Null for a name no kind has.
const SignalKindDescriptor* find_signal_kind(std::string_view name);

// The kinds as the config parser takes them (config/ is below signals/).
config::SignalKinds config_signal_kinds();
// config::parse_config and config::load_config with the kinds of this build.
Result<config::Config> parse_config(std::string_view text, std::string_view source_name);
Result<config::Config> load_config(const std::string& path);

}  // namespace edgeshed::signals
