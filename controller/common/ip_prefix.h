// Source address prefixes ("192.0.2.0/24", "2001:db8::/32") for class overrides.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace edgeshed {

enum class IpFamily { kV4, kV6 };

struct IpPrefix {
  IpFamily family = IpFamily::kV4;
  std::array<uint8_t, 16> address{};  // network byte order; IPv4 uses the first 4
  uint32_t length = 0;

  bool operator==(const IpPrefix&) const = default;
};

// Rejects host bits set below the prefix length ("192.0.2.1/24"): such a
// prefix is almost always a typo for a host or for a different network. The
// error says what is wrong, without repeating the text.
Result<IpPrefix> parse_ip_prefix(std::string_view text);

std::string to_string(const IpPrefix& prefix);

}  // namespace edgeshed
