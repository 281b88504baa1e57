#include "common/ip_prefix.h"

#include <arpa/inet.h>

#include <charconv>

namespace edgeshed {

namespace {

// Zeroes the bits past `length`, to show the network the user probably meant.
IpPrefix network_of(IpPrefix prefix) {
  for (std::size_t bit = prefix.length; bit < prefix.address.size() * 8; ++bit) {
    prefix.address[bit / 8] &= static_cast<uint8_t>(~(0x80u >> (bit % 8)));
  }
  return prefix;
}

}  // namespace

Result<IpPrefix> parse_ip_prefix(std::string_view text) {
  const std::size_t slash = text.find('/');
  if (slash == std::string_view::npos) {
    return make_error("expected address/length, e.g. \"192.0.2.0/24\"");
  }
  const std::string address(text.substr(0, slash));
  const std::string_view length_text = text.substr(slash + 1);

  IpPrefix prefix;
  uint32_t max_length = 32;
  if (inet_pton(AF_INET, address.c_str(), prefix.address.data()) == 1) {
    prefix.family = IpFamily::kV4;
  } else if (inet_pton(AF_INET6, address.c_str(), prefix.address.data()) == 1) {
    prefix.family = IpFamily::kV6;
    max_length = 128;
  } else {
    return make_error("\"" + address + "\" is not an IPv4 or IPv6 address");
  }

  const char* end = length_text.data() + length_text.size();
  auto [parsed_to, error] = std::from_chars(length_text.data(), end, prefix.length);
  if (length_text.empty() || error != std::errc() || parsed_to != end ||
      prefix.length > max_length) {
    return make_error("prefix length must be 0.." + std::to_string(max_length));
  }
  const IpPrefix network = network_of(prefix);
  if (network != prefix) {
    return make_error("host bits set; did you mean \"" + to_string(network) + "\"?");
  }
  return prefix;
}

std::string to_string(const IpPrefix& prefix) {
  char buffer[INET6_ADDRSTRLEN] = {};
  const int family = prefix.family == IpFamily::kV4 ? AF_INET : AF_INET6;
  inet_ntop(family, prefix.address.data(), buffer, sizeof(buffer));
  return std::string(buffer) + "/" + std::to_string(prefix.length);
}

}  // namespace edgeshed
