// libFuzzer target: the /proc/net/netstat parser (signals::parse_netstat).
// Every counter it returns is found again by find_counter, every counter
// the signal's fast path reads (for_each_quick_counter, quick_counter) has
// the parse's value, and a miss (a misspelt name, as an operator would write
// it in the config) is an error.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "signals/parse/netstat.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace edgeshed::signals;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto netstat = parse_netstat(text);
  if (!netstat) {
    FUZZ_CHECK(netstat.error().message.starts_with("line "), netstat.error().message);
    return 0;
  }
  // Named references, not a structured binding: clang 14's lambdas cannot
  // capture one.
  for (const auto& section_entry : netstat->sections) {
    const std::string& section = section_entry.first;
    const NetstatSection& counters = section_entry.second;
    FUZZ_CHECK(!section.empty(), "a section without a name");
    for (const auto& [name, value] : counters) {
      auto found = find_counter(*netstat, section, name);
      FUZZ_CHECK(found.ok() && *found == value, section + "." + name);
    }
    // The signal's fast path may leave a counter to the full parse, but
    // never reads another value. Every counter it reads, in one pass: a
    // quick_counter per counter rescans the text for each, which made this
    // target quadratic in its input.
    for_each_quick_counter(
        text, section, [&](std::string_view name, std::optional<uint64_t> quick) {
          auto parsed = counters.find(name);
          FUZZ_CHECK(parsed != counters.end(), "quick reads " + section + "." + std::string(name) +
                                                   ", which the parse does not have");
          FUZZ_CHECK(!quick || *quick == parsed->second,
                     "quick " + section + "." + std::string(name));
          return true;
        });
    // quick_counter itself, the fast path's entry, on the first and the
    // last counter by name.
    if (!counters.empty()) {
      for (const auto& [name, value] : {*counters.begin(), *counters.rbegin()}) {
        auto quick = quick_counter(text, section, name);
        FUZZ_CHECK(!quick || *quick == value, "quick " + section + "." + name);
      }
    }
  }
  // A miss, spelt as an operator would misspell a counter. The near-miss
  // search compares it with the counters of the section whose length is
  // near its own: in every section it was a tenth of this target's time,
  // so one section per input.
  if (!netstat->sections.empty()) {
    const auto& [section, counters] = *netstat->sections.begin();
    auto miss = find_counter(*netstat, section, "ListenDropz");
    FUZZ_CHECK(!miss.ok() || counters.contains("ListenDropz"), section + ".ListenDropz");
  }
  FUZZ_CHECK(!find_counter(*netstat, "NoSuchSection:", "ListenDrops").ok(),
             "a section with a colon");
  return 0;
}
