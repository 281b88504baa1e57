// detach and policy: commands that change the data plane directly (attach
// has its own file).
#include <cmath>
#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "cli/fail_open_warning.h"
#include "cli/interface_targets.h"
#include "common/names.h"
#include "dataplane/attach.h"

namespace edgeshed {

int fail(const std::string& message) {
  std::cerr << "edgeshed: " << message << "\n";
  return 1;
}

void add_detach_command(CLI::App& app, CliContext& ctx) {
  struct Args {
    std::string iface;
    bool force = false;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "detach",
      "Remove the programs, the clsact qdisc if edgeshed created it, and the pins; refused "
      "while a daemon manages the interface");
  cmd->add_option("-i,--iface", args->iface, "Interface")->required();
  cmd->add_flag("--force", args->force, "Detach even while a daemon manages the interface");
  cmd->callback([args, &ctx] {
    ctx.run = [args] {
      // No pin directory is no lock to take: detach still clears what a
      // half-made attach left on the link.
      Fd lock;
      if (!args->force && std::filesystem::exists(pin_dir_for(args->iface))) {
        auto taken = lock_attached_interface(args->iface);
        if (!taken) {
          return fail(taken.error().message +
                      "; stop it (its on_exit setting decides what stays), or detach --force");
        }
        lock = std::move(*taken);
      }
      if (auto s = detach(args->iface); !s) return fail(s.error().message);
      std::cout << "detached from " << args->iface << "\n";
      return 0;
    };
  });
}

void add_policy_command(CLI::App& app, CliContext& ctx) {
  struct Args {
    std::string iface, cls;
    double shed_fraction = 0;
    uint32_t cap = 0, rate = 0, burst = 0;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "policy", "Set one class's static policy (refused while a daemon runs: use `override`)");
  cmd->add_option("-i,--iface", args->iface, "Interface")->required();
  ctx.choose(cmd->add_option("-c,--class", args->cls, names::one_of(names::kClasses))->required(),
             names::all_names(names::kClasses));
  cmd->add_option("--shed-fraction", args->shed_fraction, "Fraction of new connections shed")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--cap", args->cap, "Cap on the class's requests in service, 0 for none");
  auto* rate = cmd->add_option("--rate", args->rate, "New connections per second, 0 for no limit");
  // As in `override`: a burst is a depth of the rate's bucket.
  cmd->add_option("--burst", args->burst, "Token bucket depth (default: one second of --rate)")
      ->needs(rate);
  cmd->callback([args, &ctx] {
    ctx.run = [args] {
      if (auto t = target_interfaces(args->iface); !t) return fail(t.error().message);
      // A daemon publishes every tick into the slot this would fill.
      auto lock = lock_attached_interface(args->iface);
      if (!lock) {
        return fail(lock.error().message +
                    "; it publishes the policy every tick: use `edgeshed override` "
                    "to change a class's policy through it");
      }
      auto maps = Maps::open_pinned(pin_dir_for(args->iface));
      if (!maps) return fail(maps.error().message);
      auto set = maps->read_active_policy();
      if (!set) return fail(set.error().message);
      auto& pol = set->cls[*names::find(names::kClasses, args->cls)];
      pol.shed_frac = static_cast<uint32_t>(std::lround(args->shed_fraction * EDGESHED_FRAC_ONE));
      pol.inflight_cap = args->cap;
      pol.tokens_per_sec = args->rate;
      pol.burst = args->burst ? args->burst : args->rate;
      auto ctl = maps->read_control();
      if (!ctl) return fail(ctl.error().message);
      if (auto s = maps->publish(*set, ctl->heartbeat_ns, ctl->salt); !s) {
        return fail(s.error().message);
      }
      std::cout << "policy of " << args->cls << " on " << args->iface << " set\n";
      if (auto w = fail_open_warning(*maps, args->iface, "policy of " + args->cls)) {
        std::cerr << "edgeshed: warning: " << *w << "\n";
      }
      return 0;
    };
  });
}

}  // namespace edgeshed
