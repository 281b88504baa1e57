// /proc/net/netstat: the kernel's extended TCP and IP counters, as pairs of
// lines per section, names then values:
//   TcpExt: SyncookiesSent SyncookiesRecv ... ListenOverflows ListenDrops ...
//   TcpExt: 0 0 ... 12 12 ...
//   IpExt: InNoRoutes ...
//   IpExt: 0 ...
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace edgeshed::signals {

using NetstatSection = std::map<std::string, uint64_t, std::less<>>;

struct Netstat {
  std::map<std::string, NetstatSection, std::less<>> sections;  // "TcpExt" -> counters
};

// Rejects anything but well-formed pairs, naming the line: a names line
// without its values line, a prefix that differs between the two, a count
// of names that differs from the count of values, a value that is not a
// whole number, a section given twice.
Result<Netstat> parse_netstat(std::string_view text);

// The fast path of a signal that reads one counter every tick: the counter
// from the first pair of lines of its section, without building the whole
// table. nullopt when that pair is not well formed or has no such counter:
// the caller then parses it all, for the error.
std::optional<uint64_t> quick_counter(std::string_view text, std::string_view section,
                                      std::string_view counter);

// What quick_counter reads, every counter at once: visit(name, value) for
// each name of the section's first pair of lines, in order, with nullopt
// for a value that is not a whole number, until visit returns false. False
// when that pair is not well formed (no counter is visited then). One pass
// over the text, where a quick_counter per counter is a pass each.
bool for_each_quick_counter(
    std::string_view text, std::string_view section,
    const std::function<bool(std::string_view name, std::optional<uint64_t> value)>& visit);

// One counter, or an error naming what is missing (and a near miss, for a
// misspelt counter).
Result<uint64_t> find_counter(const Netstat& netstat, std::string_view section,
                              std::string_view counter);

}  // namespace edgeshed::signals
