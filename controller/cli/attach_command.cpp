// attach: the data plane on an interface without a daemon. Its options, the
// check that something is protected, the attach under the interface's lock
// and what it prints are one function each.
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <vector>

#include "cli/argument_checks.h"
#include "cli/commands.h"
#include "cli/fail_open_warning.h"
#include "cli/port_change.h"
#include "common/names.h"
#include "config/config.h"
#include "dataplane/attach.h"
#include "dataplane/hook_choice.h"

namespace edgeshed {
namespace {

constexpr double kNsPerMs = 1e6;

struct AttachArgs {
  // The defaults are AttachOptions', by name.
  std::string iface;
  std::string hook{names::name_of(names::kHooks, AttachOptions{}.hook)};
  std::string mode{names::name_of(names::kModes, AttachOptions{}.mode)};
  std::string action{names::name_of(names::kActions, AttachOptions{}.action)};
  std::string draw{names::name_of(names::kDraws, AttachOptions{}.draw)};
  std::vector<std::string> ports, quic_ports, destinations;
  double heartbeat_timeout_ms = 1000;
  uint32_t rst_per_sec = EDGESHED_DEFAULT_RST_PER_SEC_PER_CPU;
  config::RstReflectConfig rst_reflect;
  uint32_t hash_prefix_v4 = EDGESHED_DEFAULT_HASH_PREFIX4;
  uint32_t hash_prefix_v6 = EDGESHED_DEFAULT_HASH_PREFIX6;
  bool force = false, no_port = false;
  bool hook_named = false;  // --hook given: else the interface's kind chooses
};

// The options; returns --hook's, whose count says whether it was named.
CLI::Option* add_attach_options(CLI::App& cmd, AttachArgs& args, CliContext& ctx) {
  cmd.add_option("-i,--iface", args.iface, "Interface")->required();
  auto* hook = ctx.choose(
      cmd.add_option("--hook", args.hook, names::one_of(names::kHooks, names::kFirstHook))
          ->default_str("xdp; xdp-generic on a veth, where native XDP's RSTs are lost"),
      names::all_names(names::kHooks, names::kFirstHook));
  // A comma-separated list of PORT[:CLASS], each checked as it is parsed.
  auto port_list = [&cmd](const char* name, std::vector<std::string>& out, const char* help) {
    return cmd.add_option(name, out, help)->delimiter(',')->check(port_spec_validator());
  };
  auto* port = port_list("-p,--port", args.ports,
                         "Protected ports, PORT[:CLASS], comma separated (required on a fresh "
                         "attach, unless --no-port; a re-attach without it keeps the running "
                         "ports)");
  auto* quic = port_list("--quic-port", args.quic_ports,
                         "UDP ports whose new QUIC connections are protected, PORT[:CLASS], comma "
                         "separated (a port protected for both protocols has one class)");
  cmd.add_option("--destination", args.destinations,
                 "Destination prefixes decided besides the host's own addresses (pod "
                 "networks, VIPs), comma separated; SYNs to others are transit and pass")
      ->delimiter(',')
      ->check(ip_prefix_validator());
  cmd.add_flag("--no-port", args.no_port,
               "Attach with no protected port: nothing is shed or counted until `edgeshed port "
               "add` (for trying the hook)")
      ->excludes(port)
      ->excludes(quic);
  ctx.choose(
      cmd.add_option("--mode", args.mode, names::one_of(names::kModes))->capture_default_str(),
      names::all_names(names::kModes));
  ctx.choose(cmd.add_option("--action", args.action, names::one_of(names::kActions))
                 ->capture_default_str(),
             names::all_names(names::kActions));
  ctx.choose(
      cmd.add_option("--draw", args.draw, names::one_of(names::kDraws))->capture_default_str(),
      names::all_names(names::kDraws));
  cmd.add_option("--heartbeat-timeout-ms", args.heartbeat_timeout_ms,
                 "Fail open when the controller is silent this long; 0 keeps the last policy")
      ->check(CLI::Range(0.0, 3600e3))
      ->capture_default_str();
  // A whole number within [lo, hi], its default shown in --help.
  auto bounded = [&cmd](const char* name, uint32_t& value, const char* help, uint32_t lo,
                        uint32_t hi) {
    cmd.add_option(name, value, help)->check(CLI::Range(lo, hi))->capture_default_str();
  };
  bounded("--rst-per-sec", args.rst_per_sec, "RST ceiling per CPU and second", 0, 10000000);
  bounded("--rst-reflect-per-sec", args.rst_reflect.per_sec,
          "RSTs a second toward one sender network once its burst is spent; 0: no limit", 0,
          10000000);
  bounded("--rst-reflect-burst", args.rst_reflect.burst,
          "RSTs one sender network may receive at once", 1, 10000000);
  bounded("--rst-reflect-prefix-v4", args.rst_reflect.prefix_v4,
          "Leading bits of an IPv4 sender that make its network", 1, 32);
  bounded("--rst-reflect-prefix-v6", args.rst_reflect.prefix_v6,
          "Leading bits of an IPv6 sender that make its network", 1, 128);
  bounded("--rst-reflect-per-conn", args.rst_reflect.per_conn,
          "RSTs a sender network earns per connection it establishes; 0: none", 0, 65535);
  bounded("--hash-prefix-v4", args.hash_prefix_v4,
          "Leading bits of an IPv4 source the source-hash draw covers", 1, 32);
  bounded("--hash-prefix-v6", args.hash_prefix_v6,
          "Leading bits of an IPv6 source the source-hash draw covers", 1, 128);
  cmd.add_flag("--force", args.force,
               "Attach even while a daemon manages the interface (its settings are replaced)");
  return hook;
}

// Protecting nothing is said, not defaulted: an attach that forgot its port
// would look healthy and shed nothing. A usage error, before anything runs.
void check_something_to_protect(const AttachArgs& args) {
  std::error_code ec;  // unreadable (not root): taken for a fresh attach
  if (args.ports.empty() && args.quic_ports.empty() && !args.no_port &&
      !std::filesystem::exists(pin_dir_for(args.iface), ec)) {
    throw CLI::ValidationError(
        "nothing to protect on " + args.iface +
        ": give --port PORT[:CLASS] (or --no-port to attach without a protected port)");
  }
}

// The names and numbers of the command line, checked by their options
// already, as the attach takes them; the hook as choose_hook() takes it.
Result<AttachOptions> attach_options(const AttachArgs& args, const HookChoice& hook) {
  AttachOptions opts;
  opts.iface = args.iface;
  opts.hook = hook.hook;
  opts.mode = *names::find(names::kModes, args.mode);
  opts.action = *names::find(names::kActions, args.action);
  opts.draw = *names::find(names::kDraws, args.draw);
  opts.heartbeat_timeout_ns =
      static_cast<uint64_t>(std::llround(args.heartbeat_timeout_ms * kNsPerMs));
  opts.rst_per_sec_per_cpu = args.rst_per_sec;
  opts.rst_reflect = args.rst_reflect.to_abi();
  opts.hash_prefix4 = args.hash_prefix_v4;
  opts.hash_prefix6 = args.hash_prefix_v6;
  for (const auto& text : args.destinations) opts.destinations.push_back(*parse_ip_prefix(text));
  // No port given on a re-attach: the running table stays (ports unset).
  if (!args.ports.empty() || !args.quic_ports.empty() || args.no_port) {
    std::vector<PortClass> ports;
    for (const auto& [specs, protocols] : {std::pair(&args.ports, EDGESHED_PORT_TCP),
                                           std::pair(&args.quic_ports, EDGESHED_PORT_QUIC)}) {
      for (const auto& spec : *specs) {
        auto p = parse_port_spec(spec, static_cast<uint8_t>(protocols));
        if (!p) return p.error();
        ports.push_back(*p);
      }
    }
    opts.ports = std::move(ports);
  }
  return opts;
}

// Attaching writes mode, action and limits from this command line, defaults
// included: under a daemon, that would silently put an enforcing interface
// back in observe mode. The lock is held through the attach, so a daemon
// starting beside it waits.
Result<Attached> attach_under_lock(const AttachOptions& opts, bool force) {
  Fd lock;
  const bool fresh = !std::filesystem::exists(pin_dir_for(opts.iface));
  if (!force) {
    auto taken = fresh ? lock_interface(opts.iface) : lock_attached_interface(opts.iface);
    if (!taken) {
      return Error{taken.error().message +
                   "; change its settings with `edgeshed mode`, `action` or `port`, or in its "
                   "config and reload it (SIGHUP), or attach --force to replace them"};
    }
    lock = std::move(*taken);
  }
  auto attached = attach(opts);
  // The lock made the directory: leave none behind a failed attach.
  if (!attached && fresh) rmdir(pin_dir_for(opts.iface).c_str());
  return attached;
}

// The ports before a re-attach that names them: it replaces them, which is
// said, not done silently. Empty on a fresh attach or one that keeps them.
std::optional<std::vector<PortClass>> ports_before(const AttachOptions& opts) {
  if (!opts.ports || !std::filesystem::exists(pin_dir_for(opts.iface))) return std::nullopt;
  std::vector<PortClass> before;
  if (auto maps = Maps::open_pinned(pin_dir_for(opts.iface))) {
    if (auto ports = maps->read_ports()) before = std::move(*ports);
  }
  return before;
}

void print_attached(const AttachOptions& opts, const Attached& attached, const HookChoice& hook,
                    const std::optional<std::vector<PortClass>>& before) {
  std::cout << (attached.adopted ? "replaced programs on " : "attached to ") << opts.iface << " at "
            << names::name_of(names::kHooks, opts.hook) << ", mode "
            << names::name_of(names::kModes, opts.mode) << ", action "
            << names::name_of(names::kActions, opts.action) << "\n";
  if (!attached.xdp_way.empty()) std::cout << attached.xdp_way << "\n";
  if (!hook.note.empty()) {
    (hook.warning ? std::cerr << "edgeshed: warning: " : std::cout) << hook.note << "\n";
  }
  if (before && opts.ports) {
    if (auto change = describe_port_change(*before, *opts.ports); !change.empty()) {
      std::cout << change << "\n";
    }
  }
  if (opts.mode == EDGESHED_MODE_ENFORCE) {
    if (auto w = fail_open_warning(attached.maps, opts.iface, "mode enforce")) {
      std::cerr << "edgeshed: warning: " << *w << "\n";
    }
  }
}

int run_attach(const AttachArgs& args) {
  const HookChoice hook = choose_hook(
      args.iface, args.hook_named
                      ? std::optional(static_cast<uint32_t>(*names::find<config::Hook>(args.hook)))
                      : std::nullopt);
  auto opts = attach_options(args, hook);
  if (!opts) return fail(opts.error().message);
  const std::optional<std::vector<PortClass>> before = ports_before(*opts);
  auto attached = attach_under_lock(*opts, args.force);
  if (!attached) return fail(attached.error().message);
  print_attached(*opts, *attached, hook, before);
  return 0;
}

}  // namespace

void add_attach_command(CLI::App& app, CliContext& ctx) {
  auto args = std::make_shared<AttachArgs>();
  auto* cmd = app.add_subcommand(
      "attach",
      "Attach the data plane to an interface without a daemon, or replace its programs "
      "atomically; refused while a daemon manages the interface (--force replaces its settings)");
  auto* hook = add_attach_options(*cmd, *args, ctx);
  cmd->callback([args, &ctx, hook] {
    check_something_to_protect(*args);
    args->hook_named = hook->count() > 0;
    ctx.run = [args] { return run_attach(*args); };
  });
}

}  // namespace edgeshed
