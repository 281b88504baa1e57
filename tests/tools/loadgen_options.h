// loadgen's command line: CLI11 for the syntax, then the checks and defaults
// that turn it into one run plan. No sockets here, so unit tests can parse
// argument vectors and look at the plan.
#pragma once

#include <arpa/inet.h>
#include <sys/socket.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "loadgen_plan.h"
#include "printf_string.h"

namespace edgeshed::loadgen {

struct ClassSpec {
  std::string name;
  uint16_t port = 0;
  std::string source;  // empty: round robin over --source, or the kernel's choice
  double share = 0;    // normalised: the shares of all classes add up to 1
};

struct Options {
  std::string target;
  int family = AF_INET;
  uint16_t port = 80;
  std::string schedule;       // "rate", "poisson", "ramp" or "burst"
  std::vector<Phase> phases;  // empty for a burst
  bool poisson = false;
  std::optional<uint64_t> burst;
  std::optional<uint64_t> count;
  double window_s = 10;  // arrivals stop after this; answers get timeout_ms more
  int timeout_ms = 2000;
  std::vector<ClassSpec> classes;
  std::vector<std::string> sources;
  bool keep_alive = false;
  uint32_t max_connections = 10000;
  std::string path = "/";
  std::string csv_path;
  std::string json_path;
  uint64_t seed = 1;
  bool quiet = false;
  std::vector<std::string> warnings;  // printed by main, kept here so tests can see them
};

struct ParseOutcome {
  std::optional<Options> options;  // absent: print `message` and exit with `exit_code`
  int exit_code = 0;
  std::string message;
};

inline int address_family(const std::string& address) {
  in6_addr a6;
  in_addr a4;
  if (inet_pton(AF_INET, address.c_str(), &a4) == 1) return AF_INET;
  if (inet_pton(AF_INET6, address.c_str(), &a6) == 1) return AF_INET6;
  return AF_UNSPEC;
}

inline ParseOutcome usage_error(const std::string& message) {
  return ParseOutcome{std::nullopt, 2, "loadgen: " + message + "\nRun with --help for more.\n"};
}

// Exit codes follow edgeshed's: 2 for a usage error, 0 for --help.
inline ParseOutcome parse_args(int argc, const char* const* argv) {
  CLI::App app{
      "loadgen: open-loop HTTP load over new TCP connections (or a keep-alive pool).\n"
      "Arrivals follow the clock, never the answers, so a slow server cannot slow\n"
      "the offered load. Prints a summary per class; --json and --csv for machines."};
  app.get_formatter()->column_width(34);
  Options o;
  std::optional<double> rate, duration_s, capacity;
  std::optional<uint64_t> count, burst;
  std::string ramp, class_mix;
  std::vector<std::string> class_ports, class_sources;
  app.add_option("--target", o.target, "Server address, IPv4 or IPv6 literal")->required();
  app.add_option("--port", o.port, "Port of the class 'normal' and of classes without --class-port")
      ->capture_default_str();
  app.add_option("--rate", rate, "Requests per second, spaced 1/rate apart");
  app.add_option("--burst", burst, "Start N requests at once, then wait for them");
  app.add_option("--ramp", ramp,
                 "Phases RATE:DURATION,...; RATE is req/s or Kx (K times --capacity), "
                 "e.g. \"0.5x:5s,3x:10s,0.5x:10s\"");
  app.add_option("--capacity", capacity, "Requests per second that 1x means in --ramp");
  app.add_flag("--poisson", o.poisson, "Exponential gaps between arrivals (Poisson process)");
  app.add_option("--seed", o.seed, "Seed of the --poisson draws")->capture_default_str();
  app.add_option("--count", count, "Stop starting requests after N");
  app.add_option("--duration-s", duration_s,
                 "Stop starting requests after this many seconds (default 10, or the ramp's "
                 "length)");
  app.add_option("--timeout-ms", o.timeout_ms, "A request not answered by then is a timeout")
      ->capture_default_str();
  app.add_option("--class-port", class_ports, "NAME=PORT: the class's requests go to PORT")
      ->delimiter(',');
  app.add_option("--class-source", class_sources,
                 "NAME=ADDR: the class's requests come from local address ADDR")
      ->delimiter(',');
  app.add_option("--class-mix", class_mix,
                 "NAME=SHARE,...: share of the requests of each class (default: equal)");
  app.add_option("--source", o.sources,
                 "Local address to connect from; repeat for round robin over several")
      ->delimiter(',');
  app.add_flag("--keep-alive", o.keep_alive, "Reuse a pool of persistent connections");
  app.add_option("--max-connections", o.max_connections,
                 "Size limit of the --keep-alive pool; requests wait for a free connection")
      ->capture_default_str();
  app.add_option("--path", o.path, "Request path")->capture_default_str();
  app.add_option("--csv", o.csv_path, "Write one row per request to FILE");
  app.add_option("--json", o.json_path, "Write the summary as JSON to FILE");
  app.add_flag("-q,--quiet", o.quiet, "No summary table on stdout");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::ostringstream out, err;
    int rc = app.exit(e, out, err);
    if (rc == 0) return ParseOutcome{std::nullopt, 0, out.str()};
    return ParseOutcome{std::nullopt, 2, err.str()};
  }

  o.family = address_family(o.target);
  if (o.family == AF_UNSPEC) return usage_error("--target '" + o.target + "' is not an address");
  if (o.port == 0) return usage_error("--port must be 1-65535");
  if (o.timeout_ms <= 0) return usage_error("--timeout-ms must be > 0");
  if (o.max_connections == 0) return usage_error("--max-connections must be > 0");
  if (o.path.empty() || o.path.front() != '/') return usage_error("--path must start with /");
  if (duration_s && *duration_s <= 0) return usage_error("--duration-s must be > 0");
  if (count && *count == 0) return usage_error("--count must be > 0");

  int schedules = (rate ? 1 : 0) + (burst ? 1 : 0) + (ramp.empty() ? 0 : 1);
  if (schedules != 1) return usage_error("give exactly one of --rate, --burst and --ramp");
  if (rate) {
    if (*rate <= 0) return usage_error("--rate must be > 0");
    o.schedule = o.poisson ? "poisson" : "rate";
    o.window_s = duration_s.value_or(10);
    o.phases.push_back({*rate, o.window_s, tools::printf_string("%g", *rate)});
    if (count && !duration_s && static_cast<double>(*count) / *rate > o.window_s) {
      o.warnings.push_back("--count " + std::to_string(*count) + " needs more than the " +
                           "default 10 s at this rate: stopping at 10 s (give --duration-s)");
    }
  } else if (burst) {
    if (*burst == 0) return usage_error("--burst must be > 0");
    if (o.poisson) return usage_error("--poisson does not apply to --burst");
    if (count) return usage_error("--burst N is the count already");
    o.schedule = "burst";
    o.burst = burst;
    count = burst;
    o.window_s = 0;
  } else {
    auto phases = parse_ramp(ramp, capacity);
    if (!phases) return usage_error(phases.error);
    o.schedule = "ramp";
    o.phases = *phases;
    double end = 0;
    for (const Phase& p : o.phases) end += p.duration_s;
    o.window_s = duration_s ? std::min(end, *duration_s) : end;
  }
  o.count = count;

  // Classes: the mix names them all; without a mix, "normal" and every class
  // named by --class-port or --class-source share the load equally.
  std::vector<std::pair<std::string, std::string>> ports, sources;
  for (const std::string& item : class_ports) {
    auto nv = parse_name_value(item);
    if (!nv) return usage_error("--class-port: " + nv.error);
    auto port = parse_port(nv->second);
    if (!port) return usage_error("--class-port: " + port.error);
    ports.push_back(*nv);
  }
  for (const std::string& item : class_sources) {
    auto nv = parse_name_value(item);
    if (!nv) return usage_error("--class-source: " + nv.error);
    if (address_family(nv->second) != o.family) {
      return usage_error("--class-source: '" + nv->second + "' is not an address of the " +
                         "target's family");
    }
    sources.push_back(*nv);
  }
  for (const auto* list : {&ports, &sources}) {
    for (size_t i = 0; i < list->size(); ++i) {
      for (size_t k = 0; k < i; ++k) {
        if ((*list)[i].first == (*list)[k].first) {
          return usage_error("class " + (*list)[i].first + " is given twice");
        }
      }
    }
  }
  std::vector<ClassShare> mix;
  if (!class_mix.empty()) {
    auto parsed = parse_class_mix(class_mix);
    if (!parsed) return usage_error(parsed.error);
    mix = *parsed;
    for (const auto* list : {&ports, &sources}) {
      for (const auto& [name, value] : *list) {
        bool in_mix = false;
        for (const ClassShare& c : mix) in_mix = in_mix || c.name == name;
        if (!in_mix) {
          return usage_error("class " + name + " has no share in --class-mix (give " + name +
                             "=0 to define it without traffic)");
        }
      }
    }
  } else {
    mix.push_back({"normal", 1});
    for (const auto* list : {&ports, &sources}) {
      for (const auto& [name, value] : *list) {
        bool known = false;
        for (const ClassShare& c : mix) known = known || c.name == name;
        if (!known) mix.push_back({name, 1});
      }
    }
  }
  double total = 0;
  for (const ClassShare& c : mix) total += c.share;
  for (const ClassShare& c : mix) {
    ClassSpec spec{c.name, o.port, "", c.share / total};
    for (const auto& [name, value] : ports) {
      if (name == c.name) spec.port = *parse_port(value);
    }
    for (const auto& [name, value] : sources) {
      if (name == c.name) spec.source = value;
    }
    o.classes.push_back(spec);
  }
  for (const std::string& s : o.sources) {
    if (address_family(s) != o.family) {
      return usage_error("--source '" + s + "' is not an address of the target's family");
    }
  }
  return ParseOutcome{std::move(o), 0, {}};
}

}  // namespace edgeshed::loadgen
