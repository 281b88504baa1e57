// events: sampled shed decisions as they happen, from each interface's ring.
#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "cli/argument_checks.h"
#include "cli/commands.h"
#include "cli/edgeshed_processes.h"
#include "cli/interface_targets.h"
#include "cli/interrupt.h"
#include "cli/status_model.h"
#include "common/duration.h"
#include "common/names.h"
#include "dataplane/attach.h"
#include "dataplane/events.h"
#include "dataplane/maps.h"

namespace edgeshed {
namespace {

constexpr auto kPollSlice = std::chrono::milliseconds(100);

int64_t clock_ns(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

std::string address(const edgeshed_event& ev) {
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(ev.family == AF_INET6 ? AF_INET6 : AF_INET, ev.saddr, buf, sizeof(buf));
  return buf;
}

// "2026-11-30T03:12:01.123Z"
std::string utc_time(int64_t unix_ns) {
  time_t secs = static_cast<time_t>(unix_ns / 1000000000);
  tm t{};
  gmtime_r(&secs, &t);
  char buf[32];
  if (strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &t) == 0) return std::to_string(unix_ns);
  return fmt::format("{}.{:03d}Z", buf, (unix_ns / 1000000) % 1000);
}

// The network namespace of each port whose service runs in one of its own
// (a container's), "net:[INODE]" or "gone" as status shows it, from the
// interface's port map, read again at most every kEvery: pods come and go.
// A port served in several namespaces is told apart by the event's
// service.
class PortNamespaces {
 public:
  explicit PortNamespaces(std::string iface) : iface_(std::move(iface)) {}

  std::optional<std::string> of(uint16_t port, uint8_t service) {
    const auto now = std::chrono::steady_clock::now();
    if (now - read_ >= kEvery) {
      read_ = now;
      by_port_.clear();
      auto maps = Maps::open_pinned(pin_dir_for(iface_));
      auto ports = maps ? maps->read_ports() : Result<std::vector<PortClass>>(maps.error());
      for (const auto& p : ports ? *ports : std::vector<PortClass>{}) {
        if (p.netns_ino == EDGESHED_NETNS_NONE) {
          by_port_[{p.port, p.service}] = "gone";
        } else if (p.netns_ino) {
          by_port_[{p.port, p.service}] = "net:[" + std::to_string(p.netns_ino) + "]";
        }
      }
    }
    const auto it = by_port_.find({port, service});
    if (it == by_port_.end()) return std::nullopt;
    return it->second;
  }

 private:
  static constexpr auto kEvery = std::chrono::seconds(1);
  std::string iface_;
  std::chrono::steady_clock::time_point read_{};
  std::map<std::pair<uint16_t, uint8_t>, std::string> by_port_;
};

// Each event goes to one reader of a ring: a second `edgeshed events`
// splits the stream with this one. Both are told, when each sees the other.
class OtherReaders {
 public:
  // Checks /proc at most every kEvery; says once of each reader it finds.
  void warn_of_new() {
    const auto now = std::chrono::steady_clock::now();
    if (now - checked_ < kEvery) return;
    checked_ = now;
    for (const auto& p : edgeshed_processes("events")) {
      if (std::find(told_.begin(), told_.end(), p.pid) != told_.end()) continue;
      told_.push_back(p.pid);
      std::cerr << fmt::format(
          "edgeshed: warning: another `edgeshed events` (pid {}) reads the same rings: each "
          "event goes to one reader, so each of you sees part of them; stop it for the whole "
          "stream\n",
          p.pid);
    }
  }

 private:
  static constexpr auto kEvery = std::chrono::seconds(1);
  std::chrono::steady_clock::time_point checked_{};
  std::vector<int> told_;
};

}  // namespace

void add_events_command(CLI::App& app, CliContext& ctx) {
  struct Args {
    std::string iface, duration;
    bool json = false;
    bool from_now = false;
    uint64_t count = 0;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "events",
      "Stream sampled shed decisions: time, source, port, class, verdict, reason, outcome "
      "(Ctrl-C to stop)");
  cmd->add_option("-i,--iface", args->iface, "Only this interface (default: all attached)");
  cmd->add_flag("--json", args->json, "One JSON object per line");
  cmd->add_option("-n,--count", args->count, "Stop after this many events (1 or more)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1000000000}));
  cmd->add_option("--duration", args->duration, "Stop after this long (e.g. 30s)")
      ->check(duration_validator(true));
  cmd->add_flag("--from-now", args->from_now,
                "Skip the events already waiting in the ring (they may be minutes old)");
  cmd->callback([args, &ctx] {
    ctx.run = [args] {
      auto targets = target_interfaces(args->iface);
      if (!targets) return fail(targets.error().message);
      const std::vector<std::string>& ifaces = *targets;
      // Kernel times are CLOCK_MONOTONIC; the offset turns them into wall time.
      const int64_t to_unix = clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_MONOTONIC);
      const uint64_t started_ns = static_cast<uint64_t>(clock_ns(CLOCK_MONOTONIC));
      OtherReaders others;
      others.warn_of_new();
      uint64_t seen = 0;
      std::vector<EventReader> readers;
      for (const auto& iface : ifaces) {
        auto r = EventReader::open_pinned(
            pin_dir_for(iface),
            [&seen, args, iface, to_unix, started_ns,
             namespaces = std::make_shared<PortNamespaces>(iface)](const edgeshed_event& ev) {
              if (args->count && seen >= args->count) return;
              if (args->from_now && ev.ktime_ns < started_ns) return;
              ++seen;
              const int64_t unix_ns = static_cast<int64_t>(ev.ktime_ns) + to_unix;
              const bool observed = ev.outcome == EDGESHED_EVENT_WOULD_SHED ||
                                    ev.outcome == EDGESHED_EVENT_WOULD_REFUSE_REQUEST ||
                                    ev.outcome == EDGESHED_EVENT_WOULD_RECLAIM;
              const std::string verdict(
                  names::name_of(observed ? names::Verdict::kWouldShed : names::Verdict::kShed));
              const auto netns = namespaces->of(ev.dport, ev.service);
              if (args->json) {
                nlohmann::ordered_json j = {
                    {"time", utc_time(unix_ns)},
                    {"iface", iface},
                    {"source", address(ev)},
                    {"source_port", ev.sport},
                    {"port", ev.dport},
                    {"netns", netns ? nlohmann::ordered_json(*netns) : nullptr},
                    {"protocol", names::name_of(names::kProtocols, ev.protocol)},
                    {"class", names::name_of(names::kClasses, ev.class_id)},
                    {"verdict", verdict},
                    {"reason", names::name_of(names::kReasons, ev.reason)},
                    {"outcome", names::name_of(names::kOutcomes, ev.outcome)}};
                std::cout << j.dump() << "\n";
              } else {
                std::cout << utc_time(unix_ns) << " " << iface << " " << address(ev) << ":"
                          << ev.sport << " -> " << names::name_of(names::kProtocols, ev.protocol)
                          << " port " << ev.dport << (netns ? " in " + *netns : "") << " "
                          << names::name_of(names::kClasses, ev.class_id) << " " << verdict << " ("
                          << names::name_of(names::kReasons, ev.reason) << ") "
                          << names::name_of(names::kOutcomes, ev.outcome) << "\n";
              }
              std::cout.flush();
            });
        if (!r) {
          if (!args->iface.empty()) return fail(iface + ": " + r.error().message);
          // The others still have something to say.
          std::cerr << "edgeshed: skipping " << iface << ": " << r.error().message << "\n";
          continue;
        }
        readers.push_back(std::move(*r));
      }
      if (readers.empty()) return fail("no attached interface has a readable event ring");
      catch_interrupts();
      const auto start = std::chrono::steady_clock::now();
      const auto limit = args->duration.empty() ? std::chrono::nanoseconds::max()
                                                : *parse_duration(args->duration);
      const auto slice = std::chrono::milliseconds(
          std::max<int64_t>(1, kPollSlice.count() / static_cast<int64_t>(readers.size())));
      while (!interrupted() && (!args->count || seen < args->count) &&
             std::chrono::steady_clock::now() - start < limit) {
        for (auto& r : readers) {
          if (auto n = r.poll(slice); !n) return fail(n.error().message);
        }
        others.warn_of_new();
      }
      return 0;
    };
  });
}

}  // namespace edgeshed
