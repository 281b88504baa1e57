// Runtime tuning: mode, action, level pin, class overrides, ports, prefixes.
// With a daemon running, each change goes to it over the control socket (it
// applies, logs and persists it); without one, the changes that make sense
// on their own (mode, action, ports, prefixes) are written to the pinned
// maps directly, so `edgeshed mode off` works even when the daemon is dead.
#include <algorithm>
#include <iostream>

#include "cli/argument_checks.h"
#include "cli/commands.h"
#include "cli/fail_open_warning.h"
#include "cli/interface_reading.h"
#include "cli/interface_targets.h"
#include "cli/status_model.h"
#include "common/duration.h"
#include "common/ip_prefix.h"
#include "common/join.h"
#include "common/names.h"
#include "config/config.h"
#include "dataplane/attach.h"
#include "dataplane/pin_dirs.h"
#include "dataplane/request_timers.h"
#include "ipc/control_socket.h"
#include "ipc/reset_target.h"
#include "ipc/run_dir.h"
#include "law/types.h"

namespace edgeshed {
namespace {

const std::vector<std::string> kLevels = names::all_names(names::kLevels);
const std::vector<std::string> kClasses = names::all_names(names::kClasses);

void add_for_option(CLI::App* cmd, std::string& out) {
  cmd->add_option("--for", out, "Undo the change after this long (e.g. 10m, 1h); default: keep it")
      ->check(duration_validator(true));
}

void add_direct_iface_option(CLI::App* cmd, CliContext& ctx) {
  cmd->add_option("-i,--iface", ctx.direct_iface,
                  "Change only this attached interface (default: every attached one); with a "
                  "daemon running, only the one interface it manages can be named");
}

// --for, in seconds; none: until removed.
std::optional<double> for_seconds(const std::string& for_text) {
  if (for_text.empty()) return std::nullopt;
  return std::chrono::duration<double>(*parse_duration(for_text)).count();
}

// The CLI's choices are the protocol's names: parsing them cannot fail.
law::TrafficClass traffic_class(const std::string& name) {
  return *names::parse<law::TrafficClass>(name);
}

bool daemon_running(const CliContext& ctx) { return !read_daemon(ctx.run_dir).state.is_null(); }

int send(const CliContext& ctx, const ipc::Request& request) {
  auto reply = ipc::send_request(ctx.run_dir + "/" + ipc::kControlSocketName, request);
  if (!reply) {
    // A stopped or hung daemon holds its socket but never answers.
    const auto health = read_daemon(ctx.run_dir).health;
    if (health["state"] == "running") return fail(reply.error().message);
    return fail(reply.error().message + "; " + health["why"].get<std::string>());
  }
  if (!reply->ok) {
    return fail("refused by the daemon: " + (reply->message.empty() ? "?" : reply->message));
  }
  std::cout << (reply->message.empty() ? "done" : reply->message)
            << " (in force from the daemon's next tick)\n";
  if (!reply->warning.empty()) std::cerr << "edgeshed: warning: " << reply->warning << "\n";
  return 0;
}

// A change with --iface goes through the daemon only when the daemon's
// change means that interface and no other.
int send_for(const CliContext& ctx, const ipc::Request& request, const std::string& what) {
  const auto state = read_daemon(ctx.run_dir).state;
  std::vector<std::string> managed;
  if (state.contains("interfaces") && state["interfaces"].is_array()) {
    for (const auto& i : state["interfaces"]) {
      if (i.is_string()) managed.push_back(i.get<std::string>());
    }
  }
  if (auto s = check_daemon_iface(ctx.direct_iface, managed, what); !s) {
    return fail(s.error().message);
  }
  return send(ctx, request);
}

// Applies fn to the maps of iface, or of every attached interface.
int on_interfaces(const std::string& only,
                  const std::function<Status(const std::string&, const Maps&)>& fn) {
  auto ifaces = target_interfaces(only);
  if (!ifaces) return fail("no daemon is running, and " + ifaces.error().message);
  for (const auto& iface : *ifaces) {
    // One writer at a time: each change reads the maps, changes a field and
    // writes them back, and must not write back another's stale fields.
    auto lock = lock_attached_interface(iface);
    if (!lock) return fail(lock.error().message);
    auto maps = Maps::open_pinned(pin_dir_for(iface));
    if (!maps) return fail(iface + ": " + maps.error().message);
    if (auto s = fn(iface, *maps); !s) return fail(iface + ": " + s.error().message);
  }
  return 0;
}

// With no daemon running: applies edit to the maps of one or every attached
// interface, and says what it wrote.
int write_directly(const std::string& only, const std::string& what,
                   const std::function<Status(const Maps&)>& edit) {
  return on_interfaces(only, [&](const std::string& iface, const Maps& maps) -> Status {
    if (auto s = edit(maps); !s) return s;
    std::cout << iface << ": " << what
              << " (no daemon running: written to the data plane directly)\n";
    return {};
  });
}

// The same for one field of the data plane's config.
int write_config_directly(const std::string& only, const std::string& what,
                          const std::function<void(edgeshed_config&)>& change) {
  return write_directly(only, what, [&](const Maps& maps) -> Status {
    auto cfg = maps.read_config();
    if (!cfg) return cfg.error();
    change(*cfg);
    return maps.write_config(*cfg);
  });
}

// A port added without the daemon is timed at the tracepoints, which are
// unlinked where a daemon timed every port at its cgroup (and missing on a
// kernel without the request accounting).
void warn_unless_tracepoints_time(const std::string& only) {
  for (const auto& iface : attached_interfaces()) {
    if (!only.empty() && iface != only) continue;
    if (path_exists(pin_dir_for(iface) + "/" + kRequestLinkPin)) continue;
    std::cerr << "warning: " << iface
              << ": the tracepoint request timers are not linked (a daemon timed every port at "
                 "its cgroup, or the kernel lacks them): the port's requests are not counted "
                 "until `edgeshed run` starts with it in the config\n";
  }
}

int needs_daemon(const std::string& what) {
  return fail(what + " needs the daemon, and none is running (start `edgeshed run --config FILE`)");
}

int direct_without_for() {
  return fail("--for needs the daemon to undo the change, and none is running");
}

// `mode MODE [--for] [-i]`
void add_mode_command(CLI::App& app, CliContext& ctx) {
  struct Args {
    std::string mode, for_text;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "mode", "Switch shedding off, to observe (count would-sheds only) or to enforce");
  ctx.choose(cmd->add_option("MODE", a->mode, names::one_of(names::kModes))->required(),
             names::all_names(names::kModes));
  add_for_option(cmd, a->for_text);
  add_direct_iface_option(cmd, ctx);
  cmd->callback([a, &ctx] {
    ctx.run = [a, &ctx] {
      if (daemon_running(ctx)) {
        return send_for(
            ctx, ipc::ModeRequest{*names::parse<law::Mode>(a->mode), for_seconds(a->for_text)},
            "a mode");
      }
      if (!a->for_text.empty()) return direct_without_for();
      const int rc = write_config_directly(
          ctx.direct_iface, "mode " + a->mode,
          [&](edgeshed_config& cfg) { cfg.mode = *names::find(names::kModes, a->mode); });
      // Failing open, enforce sheds nothing; off and observe lose nothing.
      if (rc == 0 && *names::find(names::kModes, a->mode) == EDGESHED_MODE_ENFORCE) {
        warn_if_failing_open(ctx.direct_iface, "mode " + a->mode);
      }
      return rc;
    };
  });
}

// `action drop|rst [--for] [-i]`
void add_action_command(CLI::App& app, CliContext& ctx) {
  struct Args {
    std::string action, for_text;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("action", "Answer shed SYNs with a RST or drop them silently");
  ctx.choose(cmd->add_option("ACTION", a->action, names::one_of(names::kActions))->required(),
             names::all_names(names::kActions));
  add_for_option(cmd, a->for_text);
  add_direct_iface_option(cmd, ctx);
  cmd->callback([a, &ctx] {
    ctx.run = [a, &ctx] {
      if (daemon_running(ctx)) {
        return send_for(
            ctx,
            ipc::ActionRequest{*names::find<config::Action>(a->action), for_seconds(a->for_text)},
            "an action");
      }
      if (!a->for_text.empty()) return direct_without_for();
      const int rc = write_config_directly(
          ctx.direct_iface, "action " + a->action,
          [&](edgeshed_config& cfg) { cfg.action = *names::find(names::kActions, a->action); });
      if (rc == 0) warn_if_failing_open(ctx.direct_iface, "action " + a->action);
      return rc;
    };
  });
}

// `pin LEVEL [--for]` and `unpin`
void add_pin_commands(CLI::App& app, CliContext& ctx) {
  struct Args {
    std::string level, for_text;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "pin", "Hold the pressure level, whatever the signals say (hard-safety signals still win)");
  ctx.choose(cmd->add_option("LEVEL", a->level, names::one_of(names::kLevels))->required(),
             kLevels);
  add_for_option(cmd, a->for_text);
  cmd->callback([a, &ctx] {
    ctx.run = [a, &ctx] {
      if (!daemon_running(ctx)) return needs_daemon("pinning a level");
      return send(ctx,
                  ipc::PinRequest{*names::parse<law::Level>(a->level), for_seconds(a->for_text)});
    };
  });
  auto* un = app.add_subcommand("unpin", "Give the level back to the control law");
  un->callback([&ctx] {
    ctx.run = [&ctx] {
      if (!daemon_running(ctx)) return needs_daemon("unpinning");
      return send(ctx, ipc::ResetRequest{ipc::ResetGroup::kLevel});
    };
  });
}

// `override CLASS (--admit-fraction|--cap|--rate [--burst]|--clear) [--for]`
void add_override_command(CLI::App& app, CliContext& ctx) {
  struct Args {
    std::string cls, for_text;
    std::optional<double> admit_fraction;
    std::optional<uint32_t> cap, rate, burst;
    bool clear = false;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "override",
      "Fix one class's admit fraction, in-flight cap or rate over the control law (critical "
      "keeps its floor)");
  ctx.choose(cmd->add_option("CLASS", a->cls, "critical, normal or background")->required(),
             kClasses);
  auto* f = cmd->add_option("--admit-fraction", a->admit_fraction, "Share admitted, 0.0..1.0")
                ->check(CLI::Range(0.0, 1.0));
  auto* c = cmd->add_option("--cap", a->cap, "In-flight cap")->check(CLI::Range(1u, 1000000000u));
  auto* r = cmd->add_option("--rate", a->rate, "New connections per second")
                ->check(CLI::Range(1u, 1000000000u));
  cmd->add_option("--burst", a->burst, "Token bucket depth (default: one second of --rate)")
      ->check(CLI::Range(1u, 1000000000u))
      ->needs(r);
  add_for_option(cmd, a->for_text);
  cmd->add_flag("--clear", a->clear, "Remove the class's override")
      ->excludes(f)
      ->excludes(c)
      ->excludes(r);
  cmd->callback([a, &ctx] {
    if (!a->clear && !a->admit_fraction && !a->cap && !a->rate) {
      throw CLI::ValidationError("give --admit-fraction, --cap, --rate or --clear");
    }
    ctx.run = [a, &ctx] {
      if (!daemon_running(ctx)) return needs_daemon("a class override");
      if (a->clear) return send(ctx, ipc::ResetRequest{ipc::ResetClass{traffic_class(a->cls)}});
      return send(ctx, ipc::OverrideRequest{traffic_class(a->cls), a->admit_fraction, a->cap,
                                            a->rate, a->burst, for_seconds(a->for_text)});
    };
  });
}

// `port add PORT[,PORT...] [-c CLASS]` and `port remove PORT[,PORT...]`
void add_port_command(CLI::App& app, CliContext& ctx) {
  struct Args {
    std::vector<std::string> ports;  // checked by port_number_validator()
    std::string cls{names::name_of(config::PortConfig{}.traffic_class)};
  };
  auto a = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("port", "Protect a port, or stop protecting it");
  cmd->require_subcommand(1);
  auto* add = cmd->add_subcommand(
      "add", "Protect PORT for TCP, or change its class (new connections to it may be shed)");
  add->add_option("PORT", a->ports, "1..65535, comma separated as attach --port takes them")
      ->required()
      ->delimiter(',')
      ->check(port_number_validator());
  ctx.choose(
      add->add_option("-c,--class", a->cls, "Class of its connections")->capture_default_str(),
      kClasses);
  auto* rm = cmd->add_subcommand(
      "remove", "Stop protecting PORT, for TCP and QUIC (its new connections always pass)");
  rm->add_option("PORT", a->ports, "1..65535, comma separated")
      ->required()
      ->delimiter(',')
      ->check(port_number_validator());
  add_direct_iface_option(add, ctx);
  add_direct_iface_option(rm, ctx);
  auto numbers = [a] {
    std::vector<uint16_t> out;
    for (const auto& p : a->ports) out.push_back(static_cast<uint16_t>(std::stoul(p)));
    return out;
  };
  add->callback([a, &ctx, numbers] {
    ctx.run = [a, &ctx, numbers] {
      if (daemon_running(ctx)) {
        for (const uint16_t port : numbers()) {
          if (int rc = send_for(ctx, ipc::PortRequest{port, traffic_class(a->cls)}, "a port");
              rc != 0) {
            return rc;
          }
        }
        return 0;
      }
      const auto what = "port " + join(a->ports, ",") + " protected as " + a->cls;
      warn_unless_tracepoints_time(ctx.direct_iface);
      return write_directly(ctx.direct_iface, what, [&](const Maps& maps) -> Status {
        auto ports = maps.read_ports();
        if (!ports) return ports.error();
        for (const uint16_t port : numbers()) {
          // A port number's protocols share its class; a new port is TCP.
          auto it = std::find_if(ports->begin(), ports->end(),
                                 [&](const PortClass& p) { return p.port == port; });
          if (it == ports->end()) {
            ports->push_back({port, *names::find(names::kClasses, a->cls)});
          } else {
            it->class_id = *names::find(names::kClasses, a->cls);
          }
        }
        return maps.set_ports(*ports);
      });
    };
  });
  rm->callback([a, &ctx, numbers] {
    ctx.run = [a, &ctx, numbers] {
      if (daemon_running(ctx)) {
        for (const uint16_t port : numbers()) {
          if (int rc = send_for(ctx, ipc::PortRemoveRequest{port}, "a port"); rc != 0) return rc;
        }
        return 0;
      }
      return write_directly(ctx.direct_iface, "port " + join(a->ports, ",") + " unprotected",
                            [&](const Maps& maps) -> Status {
                              auto ports = maps.read_ports();
                              if (!ports) return ports.error();
                              const auto gone = numbers();
                              std::erase_if(*ports, [&](const PortClass& p) {
                                return std::find(gone.begin(), gone.end(), p.port) != gone.end();
                              });
                              return maps.set_ports(*ports);
                            });
    };
  });
}

// `prefix add CIDR -c CLASS` and `prefix remove CIDR`
void add_prefix_command(CLI::App& app, CliContext& ctx) {
  struct Args {
    std::string cidr, cls;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "prefix",
      "Give connections from a source prefix another class (e.g. health checkers "
      "critical)");
  cmd->require_subcommand(1);
  auto* add = cmd->add_subcommand("add", "Class connections from CIDR as CLASS");
  add->add_option("CIDR", a->cidr, "e.g. 192.0.2.0/24 or 2001:db8::/32")->required();
  ctx.choose(add->add_option("-c,--class", a->cls, "critical, normal or background")->required(),
             kClasses);
  auto* rm = cmd->add_subcommand("remove", "Remove the override of CIDR");
  rm->add_option("CIDR", a->cidr, "The prefix as added")->required();
  add_direct_iface_option(add, ctx);
  add_direct_iface_option(rm, ctx);
  auto check = [a]() -> Result<IpPrefix> {
    auto p = parse_ip_prefix(a->cidr);
    if (!p) return make_error("prefix '" + a->cidr + "': " + p.error().message);
    return p;
  };
  add->callback([a, &ctx, check] {
    if (auto p = check(); !p) throw CLI::ValidationError(p.error().message);
    ctx.run = [a, &ctx, check] {
      if (daemon_running(ctx)) {
        return send_for(ctx, ipc::PrefixRequest{*check(), traffic_class(a->cls)}, "a prefix");
      }
      auto prefix = *check();
      return write_directly(ctx.direct_iface, to_string(prefix) + " classed " + a->cls,
                            [&](const Maps& maps) {
                              return maps.set_prefix(prefix, *names::find(names::kClasses, a->cls));
                            });
    };
  });
  rm->callback([a, &ctx, check] {
    if (auto p = check(); !p) throw CLI::ValidationError(p.error().message);
    ctx.run = [a, &ctx, check] {
      if (daemon_running(ctx)) return send_for(ctx, ipc::PrefixRemoveRequest{*check()}, "a prefix");
      auto prefix = *check();
      return write_directly(ctx.direct_iface, "override of " + to_string(prefix) + " removed",
                            [&](const Maps& maps) { return maps.remove_prefix(prefix); });
    };
  });
}

// `reset [WHAT]`: the operator's words become a typed target (ipc/reset_target.h)
void add_reset_command(CLI::App& app, CliContext& ctx) {
  auto what = std::make_shared<std::string>("all");
  auto* cmd = app.add_subcommand(
      "reset",
      "Undo runtime changes: all, mode, action, level, class:CLASS, port:PORT, prefix:CIDR");
  ctx.suggest(cmd->add_option("WHAT", *what, "What to give back to the config file")
                  ->capture_default_str()
                  ->check(reset_target_validator()),
              ipc::reset_target_words());
  cmd->callback([what, &ctx] {
    ctx.run = [what, &ctx] {
      if (!daemon_running(ctx)) return needs_daemon("reset");
      // Checked by the option's validator: parsing cannot fail here.
      return send(ctx, ipc::ResetRequest{*ipc::parse_reset_target(*what)});
    };
  });
}

}  // namespace

void add_tuning_commands(CLI::App& app, CliContext& ctx) {
  add_mode_command(app, ctx);
  add_action_command(app, ctx);
  add_pin_commands(app, ctx);
  add_override_command(app, ctx);
  add_port_command(app, ctx);
  add_prefix_command(app, ctx);
  add_reset_command(app, ctx);
}

}  // namespace edgeshed
