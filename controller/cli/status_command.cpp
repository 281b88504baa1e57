// status: what edgeshed is doing, from the pins and the daemon's state file.
#include <chrono>
#include <iostream>
#include <thread>

#include "cli/commands.h"
#include "cli/status_model.h"

namespace edgeshed {

void add_status_command(CLI::App& app, CliContext& ctx) {
  struct Args {
    std::string iface;
    bool json = false;
    double interval_s = 0.5;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "status", "Show the level, signals and each attached interface's policy, counters and rates");
  cmd->add_option("-i,--iface", args->iface, "Only this interface");
  cmd->add_flag("--json", args->json, "Machine-readable output");
  cmd->add_option("--interval", args->interval_s,
                  "Seconds between the two counter reads the rates come from; 0: no rates")
      ->check(CLI::Range(0.0, 60.0))
      ->capture_default_str();
  cmd->callback([args, &ctx] {
    ctx.run = [args, &ctx] {
      std::vector<std::string> ifaces;
      if (!args->iface.empty()) {
        ifaces.push_back(args->iface);
      } else {
        ifaces = attached_interfaces();
      }
      if (ifaces.empty()) {
        return fail("no interface is attached (nothing in " EDGESHED_PIN_ROOT
                    "); start `edgeshed run --config FILE` or `edgeshed attach`");
      }
      std::vector<InterfaceReading> first;
      for (const auto& iface : ifaces) {
        auto r = read_interface(iface);
        if (!r) return fail(iface + ": " + r.error().message);
        first.push_back(std::move(*r));
      }
      std::vector<InterfaceReading> readings = first;
      if (args->interval_s > 0) {
        std::this_thread::sleep_for(std::chrono::duration<double>(args->interval_s));
        for (size_t i = 0; i < ifaces.size(); ++i) {
          auto r = read_interface(ifaces[i]);
          if (!r) return fail(ifaces[i] + ": " + r.error().message);
          add_rates(*r, first[i]);
          readings[i] = std::move(*r);
        }
      }
      auto status = status_json(read_daemon_state(ctx.run_dir), readings);
      if (args->json) {
        // One interface asked for: its object, with the daemon beside it.
        if (!args->iface.empty()) {
          auto one = status["interfaces"][0];
          one["daemon"] = status["daemon"];
          std::cout << one.dump(2) << "\n";
        } else {
          std::cout << status.dump(2) << "\n";
        }
        return 0;
      }
      for (const auto& line : status_lines(status)) std::cout << line << "\n";
      return 0;
    };
  });
}

}  // namespace edgeshed
