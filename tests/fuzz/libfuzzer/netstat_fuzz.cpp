// libFuzzer target: the /proc/net/netstat parser (signals::parse_netstat).
// Every counter it returns is found again by find_counter (and by the
// signal's quick_counter, where it finds one), and a miss (a
// misspelt name, as an operator would write it in the config) is an error.
#include <cstdint>
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
  for (const auto& [section, counters] : netstat->sections) {
    FUZZ_CHECK(!section.empty(), "a section without a name");
    for (const auto& [name, value] : counters) {
      auto found = find_counter(*netstat, section, name);
      FUZZ_CHECK(found.ok() && *found == value, section + "." + name);
      // The signal's fast path may leave a counter to the full parse, but
      // never reads another value.
      auto quick = quick_counter(text, section, name);
      FUZZ_CHECK(!quick || *quick == value, "quick " + section + "." + name);
    }
  }
  // A miss, spelt as an operator would misspell a counter. The near-miss
  // search compares it with every counter of the section, which under the
  // sanitizers costs milliseconds: one section per input.
  if (!netstat->sections.empty()) {
    const auto& [section, counters] = *netstat->sections.begin();
    auto miss = find_counter(*netstat, section, "ListenDropz");
    FUZZ_CHECK(!miss.ok() || counters.contains("ListenDropz"), section + ".ListenDropz");
  }
  FUZZ_CHECK(!find_counter(*netstat, "NoSuchSection:", "ListenDrops").ok(),
             "a section with a colon");
  return 0;
}
