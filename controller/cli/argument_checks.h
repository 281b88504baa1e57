// Checks of the command line's values, run by CLI11 while it parses: a bad
// value is a usage error (exit 2) before anything is read, written or sent
// to the daemon, and the same value gets the same answer in every command.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "common/result.h"
#include "dataplane/maps.h"

namespace edgeshed {

// PORT[:CLASS], as attach's --port and --quic-port take it.
Result<PortClass> parse_port_spec(const std::string& spec, uint8_t protocols);
CLI::Validator port_spec_validator();

// A bare port number, 1..65535 (port add and remove; --class gives the class).
CLI::Validator port_number_validator();

// A duration as the config writes it ("10m"); positive: over 0.
CLI::Validator duration_validator(bool positive);

// A duration in seconds for an option that holds a number of them
// (--interval): "500ms" or "1s" as everywhere else, a bare number as
// seconds; rewritten to the seconds and checked within [lo_s, hi_s].
CLI::Validator seconds_validator(double lo_s, double hi_s);

// A CIDR prefix ("10.244.0.0/16", "2001:db8::/32").
CLI::Validator ip_prefix_validator();

// What `reset` takes (ipc/reset_target.h).
CLI::Validator reset_target_validator();

}  // namespace edgeshed
