// The kind-specific keys of a [[signal]] table, as the config file wrote
// them, for the signal that reads them (signals/signal_params.h). Only the
// files that read them include toml++.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include <toml++/toml.h>

#include "config/config.h"

namespace edgeshed::config {

struct SignalTable {
  toml::table keys;
  // toml++ does not copy source positions with nodes, so they are kept here.
  std::map<std::string, toml::source_position, std::less<>> positions;
};

// The keys of a signal; an empty table when it has none.
inline const toml::table& signal_keys(const SignalConfig& signal) {
  static const toml::table kNone;
  return signal.params ? signal.params->keys : kNone;
}

// Keys without source positions: a signal made in code (a default signal, a
// test).
inline std::shared_ptr<const SignalTable> make_signal_table(toml::table keys) {
  return std::make_shared<const SignalTable>(SignalTable{std::move(keys), {}});
}

}  // namespace edgeshed::config
