// What a signal kind is: the meaning the README gives it, how its keys are
// checked and how its source is made. Each kind's file
// (controller/signals/<kind>_signal.cpp) defines one, next to its source;
// the table in signal_kinds.cpp, one line per kind, is all that lists them.
#pragma once

#include <memory>
#include <string_view>

#include "common/result.h"
#include "config/config.h"
#include "signals/signal_source.h"

namespace edgeshed::signals {

struct DataplaneReaders;  // signals/dataplane_readers.h

using MadeSource = Result<std::unique_ptr<SignalSource>>;

struct SignalKindDescriptor {
  // One sentence, for the README's table of kinds (scripts/gen_readme.sh).
  std::string_view meaning;
  // Checks the kind's keys without making a source (which may start a
  // thread): the config fuzz target's view of what `make` refuses.
  Status (*check)(const config::SignalConfig& cfg) = nullptr;
  // The source, or every error in the kind's keys. `readers` are the
  // daemon's numbers of the data plane; they are called only from sample().
  MadeSource (*make)(const config::SignalConfig& cfg, const DataplaneReaders& readers) = nullptr;
};

// A kind's `check` from its options parser: Result<Options> fn(const SignalConfig&).
template <auto options>
Status check_options(const config::SignalConfig& cfg) {
  auto parsed = options(cfg);
  if (!parsed) return parsed.error();
  return {};
}

// A kind's `check` by making its source and dropping it: for kinds whose
// source starts nothing and reads nothing before it is sampled.
template <auto make, class Readers = DataplaneReaders>
Status check_by_making(const config::SignalConfig& cfg) {
  auto made = make(cfg, Readers{});
  if (!made) return made.error();
  return {};
}

// The source as the interface, from a factory of a concrete type.
template <class T>
MadeSource as_source(Result<std::unique_ptr<T>> made) {
  if (!made) return made.error();
  return std::unique_ptr<SignalSource>(std::move(*made));
}

}  // namespace edgeshed::signals
