// status: what edgeshed is doing, from the pins and the daemon's state file.
#include <chrono>
#include <iostream>
#include <thread>

#include "cli/argument_checks.h"
#include "cli/commands.h"
#include "cli/daemon_whereabouts.h"
#include "cli/interface_rates.h"
#include "cli/interface_targets.h"
#include "cli/status_model.h"
#include "cli/status_summary.h"

namespace edgeshed {
namespace {

// How long status waits for a daemon that is starting to attach (it takes
// about 0.7 s on a veth).
constexpr std::chrono::milliseconds kWaitForStart{5000};

}  // namespace

void add_status_command(CLI::App& app, CliContext& ctx) {
  struct Args {
    std::string iface;
    bool json = false;
    bool verbose = false;
    double interval_s = 0.5;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "status", "Show the level, signals and each attached interface's policy, counters and rates");
  cmd->add_option("-i,--iface", args->iface, "Only this interface");
  cmd->add_flag("--json", args->json, "Machine-readable output");
  cmd->add_flag("-v,--verbose", args->verbose,
                "Every signal, counter and setting (the default fits one 80-column screen)");
  cmd->add_option("--interval", args->interval_s,
                  "Time between the two counter reads the rates come from (e.g. 500ms, 1s; a "
                  "bare number is seconds); 0: no rates")
      ->transform(seconds_validator(0.0, 60.0))
      ->capture_default_str();
  cmd->callback([args, &ctx] {
    ctx.run = [args, &ctx] {
      auto targets = interfaces_for_status(args->iface, ctx.run_dir, kWaitForStart);
      if (!targets && args->json) {
        // JSON for a monitor, whatever is attached: none is an empty list,
        // and an interface asked for and not there is its error.
        const auto daemon = read_daemon(ctx.run_dir);
        if (args->iface.empty()) {
          std::cout << status_json(daemon.state, daemon.health, {}).dump(2) << "\n";
          return 0;
        }
        auto one = status_json(daemon.state, daemon.health,
                               {unreadable_interface(args->iface, targets.error().message)});
        auto iface = one["interfaces"][0];
        iface["daemon"] = one["daemon"];
        iface["daemon_health"] = one["daemon_health"];
        std::cout << iface.dump(2) << "\n";
        return 1;
      }
      if (!targets) return fail(targets.error().message);
      const std::vector<std::string>& ifaces = *targets;
      // One broken interface (another ABI, a half-removed pin) must not hide
      // the others: it is shown with its error, and the exit code says so.
      int rc = 0;
      auto read_all = [&](std::vector<InterfaceReading>& out) {
        out.clear();
        for (const auto& iface : ifaces) {
          auto r = read_interface(iface);
          if (!r) {
            rc = 1;
            out.push_back(unreadable_interface(iface, r.error().message));
          } else {
            out.push_back(std::move(*r));
          }
        }
      };
      std::vector<InterfaceReading> first, readings;
      read_all(first);
      readings = first;
      if (args->interval_s > 0) {
        std::this_thread::sleep_for(std::chrono::duration<double>(args->interval_s));
        rc = 0;
        read_all(readings);
        for (size_t i = 0; i < readings.size(); ++i) add_rates(readings[i], first[i]);
      }
      const auto daemon = read_daemon(ctx.run_dir);
      auto status = status_json(daemon.state, daemon.health, readings);
      if (args->json) {
        // One interface asked for: its object, with the daemon beside it.
        if (!args->iface.empty()) {
          if (rc != 0) return fail(args->iface + ": " + readings[0].status.error.value_or("?"));
          auto one = status["interfaces"][0];
          one["daemon"] = status["daemon"];
          one["daemon_health"] = status["daemon_health"];
          std::cout << one.dump(2) << "\n";
        } else {
          std::cout << status.dump(2) << "\n";
        }
        return rc;
      }
      if (!args->iface.empty() && rc != 0) {
        return fail(args->iface + ": " + readings[0].status.error.value_or("?"));
      }
      const bool verbose = args->verbose || ctx.verbose;
      for (const auto& line : verbose ? status_lines(status) : status_summary(status)) {
        std::cout << line << "\n";
      }
      return rc;
    };
  });
}

}  // namespace edgeshed
