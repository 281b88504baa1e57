#include "dataplane/attach.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <thread>

#include "common/names.h"
#include "dataplane/capabilities.h"
#include "dataplane/errno_message.h"
#include "dataplane/link_type.h"
#include "dataplane/pin_dirs.h"
#include "dataplane/skeleton.h"
#include "dataplane/tc_filters.h"
#include "dataplane/vlan_devices.h"
#include "dataplane/xdp_chain.h"
#include "edgeshed.skel.h"

namespace edgeshed {
namespace {

constexpr std::chrono::milliseconds kLockPoll{10};
constexpr const char* kXdpLinkPin = "xdp_link";
constexpr const char* kTrackerLinkPin = "tracker_link";
// Every link edgeshed pins but the cgroups' (kCgroupLinkPrefix): detach
// removes them all.
constexpr const char* kLinkPins[] = {kXdpLinkPin, kTrackerLinkPin, kRequestLinkPin,
                                     kResponseLinkPin};

Result<int> ifindex_of(const std::string& iface) {
  unsigned idx = if_nametoindex(iface.c_str());
  if (idx == 0) return make_error("no such interface: " + iface);
  return static_cast<int>(idx);
}

// Attaches the XDP program and says how. A program already on the hook is
// chained behind edgeshed's (dataplane/xdp_chain.h); otherwise a pinned
// bpf_link holds edgeshed's, and replacing it is one bpf_link_update().
Result<std::string> attach_xdp(const Skeleton& skel, int ifindex, const AttachOptions& opts,
                               const std::string& dir,
                               const std::optional<XdpNeighbour>& neighbour) {
  int prog_fd = bpf_program__fd(skel.xdp_program());
  const std::string chained =
      "chained by a tail call (not libxdp's dispatcher): edgeshed's XDP program runs first "
      "and hands each frame it passes to the program that was there before, ";
  if (xdp_chained(dir)) {
    if (auto s = rechain_xdp(ifindex, prog_fd, dir); !s) return s.error();
    return chained + xdp_slot_text(dir);
  }
  if (neighbour) {
    if (auto s = chain_xdp(ifindex, opts.hook, prog_fd, bpf_map__fd(skel->maps.es_xdp_next),
                           *neighbour, dir);
        !s) {
      return s.error();
    }
    return chained + xdp_slot_text(dir) + "; `edgeshed detach` gives the hook back to it";
  }
  std::string pin = dir + "/" + kXdpLinkPin;
  if (path_exists(pin)) {
    Fd link(bpf_obj_get(pin.c_str()));
    if (!link.valid()) return make_error("cannot open " + pin + ": " + errno_text(errno));
    if (bpf_link_update(link.get(), prog_fd, nullptr) != 0) {
      return make_error("cannot replace the XDP program on " + opts.iface + ": " +
                        errno_text(errno));
    }
    return std::string("edgeshed's XDP program alone on the hook (a bpf_link)");
  }
  bpf_link_create_opts lo{};
  lo.sz = sizeof(lo);
  lo.flags = opts.hook == EDGESHED_HOOK_XDP ? XDP_FLAGS_DRV_MODE : XDP_FLAGS_SKB_MODE;
  Fd link(bpf_link_create(prog_fd, ifindex, BPF_XDP, &lo));
  if (!link.valid()) {
    int err = errno;
    std::string hint = opts.hook == EDGESHED_HOOK_XDP && (err == EOPNOTSUPP || err == EINVAL)
                           ? " (hook unsupported: the driver has no native XDP; use --hook " +
                                 std::string(names::kHooks[EDGESHED_HOOK_XDP_GENERIC]) +
                                 " or --hook " + std::string(names::kHooks[EDGESHED_HOOK_TC]) + ")"
                           : "";
    return make_error("cannot attach XDP to " + opts.iface + ": " + errno_text(err) + hint);
  }
  if (bpf_obj_pin(link.get(), pin.c_str()) != 0) {
    return make_error("cannot pin " + pin + ": " + errno_text(errno));
  }
  return std::string("edgeshed's XDP program alone on the hook (a bpf_link)");
}

// Removes our filter, and the clsact qdisc if edgeshed created it; returns
// what it could not remove, as " what: why;" items.
std::string remove_tc(int ifindex, bool owns_qdisc) {
  std::string problems = tc_detach_filter(ifindex, kHookFilter, "tc filter");
  if (owns_qdisc) problems += tc_destroy_clsact(ifindex);
  return problems;
}

// Returns whether edgeshed created the clsact qdisc.
Result<bool> attach_tc(const Skeleton& skel, int ifindex, const AttachOptions& opts) {
  int err = tc_create_clsact(ifindex);
  if (err != 0 && err != -EEXIST) {
    return make_error("hook unsupported: cannot add a clsact qdisc to " + opts.iface + ": " +
                      errno_text(err));
  }
  bool created = err == 0;
  if (int e = tc_attach_filter(ifindex, kHookFilter, bpf_program__fd(skel->progs.edgeshed_tc));
      e != 0) {
    (void)remove_tc(ifindex, created);
    return make_error("cannot attach the TC program to " + opts.iface + ": " + errno_text(e));
  }
  return created;
}

// Tracing links cannot swap programs, so a new one is attached before the
// old one is released: the tracker's counted mark, the latency programs'
// request stamp (taken once) and close mark keep the overlap from counting
// a connection or a sample twice.
Status attach_tracing(bpf_program* prog, const std::string& dir, const char* pin_name,
                      const std::string& what) {
  std::string pin = dir + "/" + pin_name;
  std::string fresh = pin + "_new";  // bpffs names may not contain dots
  bpf_link* link = bpf_program__attach(prog);
  if (!link) {
    return make_error("cannot attach the " + what + ": " + errno_text(errno));
  }
  unlink(fresh.c_str());
  int err = bpf_link__pin(link, fresh.c_str());
  // Disconnected, destroy frees the struct and leaves the fd open: without
  // this close the daemon would hold the link for its life, and unlinking
  // the pin (RequestTimers::unlink_tracepoints) would not release it.
  const int fd = bpf_link__fd(link);
  bpf_link__disconnect(link);
  bpf_link__destroy(link);
  close(fd);
  if (err) return make_error("cannot pin " + fresh + ": " + errno_text(err));
  if (path_exists(pin) && unlink(pin.c_str()) != 0) {
    return make_error("cannot release the old " + what + " " + pin + ": " + errno_text(errno));
  }
  if (rename(fresh.c_str(), pin.c_str()) != 0) {
    return make_error("cannot rename " + fresh + ": " + errno_text(errno));
  }
  return {};
}

// The in-flight tracker (which also ends the connection time) and the two
// halves of the response time.
Status attach_tracker(const Skeleton& skel, const std::string& dir) {
  if (auto s = attach_tracing(skel->progs.edgeshed_track, dir, kTrackerLinkPin,
                              "in-flight tracker (tp_btf/inet_sock_set_state)");
      !s) {
    return s;
  }
  if (!skel.measures_response()) {
    // An older kernel: no response time; no link of an earlier load either.
    unlink((dir + "/" + kRequestLinkPin).c_str());
    unlink((dir + "/" + kResponseLinkPin).c_str());
    return {};
  }
  if (auto s = attach_tracing(skel->progs.edgeshed_request, dir, kRequestLinkPin,
                              "request timer (tp_btf/sk_data_ready, Linux 6.6+)");
      !s) {
    return s;
  }
  return attach_tracing(skel->progs.edgeshed_response, dir, kResponseLinkPin,
                        "response timer (tp_btf/tcp_sendmsg_locked, Linux 6.11+)");
}

// Reads the ABI and hook of an attached data plane before libbpf touches
// its maps, so another ABI is refused instead of misread.
Result<std::optional<edgeshed_config>> attached_config(const std::string& dir) {
  if (!path_exists(dir + "/es_config")) return std::optional<edgeshed_config>{};
  auto maps = Maps::open_pinned(dir);
  if (!maps) return maps.error();
  auto cfg = maps->read_config();
  if (!cfg) return cfg.error();
  return std::optional<edgeshed_config>(*cfg);
}

Result<Attached> attach_or_adopt(const AttachOptions& opts);

}  // namespace

std::string pin_dir_for(const std::string& iface) {
  return std::string(EDGESHED_PIN_ROOT) + "/" + iface;
}

Result<Attached> attach(const AttachOptions& opts) {
  if (auto s = require_capabilities(); !s) return s.error();
  std::string dir = pin_dir_for(opts.iface);
  // A directory that is not ours is left exactly as it is.
  if (path_exists(dir)) {
    if (auto s = owned_by_us(dir); !s) return s.error();
  }
  bool had_pins = path_exists(dir + "/es_config");
  auto attached = attach_or_adopt(opts);
  // A failed first attach must not leave half a data plane pinned.
  if (!attached && !had_pins && path_exists(dir)) (void)detach(opts.iface);
  return attached;
}

namespace {

Result<Attached> attach_or_adopt(const AttachOptions& opts) {
  auto ifindex = ifindex_of(opts.iface);
  if (!ifindex) return ifindex.error();
  auto link = read_link_framing(opts.iface);
  if (!link) return link.error();
  // Native XDP never sees an IP device's packets; generic XDP reads the
  // first 14 bytes of whatever it returns as an Ethernet header and, the
  // RST's addresses being swapped there, sends it with a protocol that a
  // tunnel's transmit drops. TC keeps the skb's protocol.
  if (link->framing == EDGESHED_FRAMING_IP && opts.hook != EDGESHED_HOOK_TC) {
    return make_error(opts.iface +
                      " is an IP device (a tunnel, WireGuard or tun): XDP cannot answer its "
                      "packets; attach with --hook tc");
  }
  if (auto s = ensure_bpffs(); !s) return s.error();
  if (auto s = make_private_dir(EDGESHED_PIN_ROOT); !s) return s.error();
  std::string dir = pin_dir_for(opts.iface);
  if (auto s = make_private_dir(dir); !s) return s.error();

  auto previous = attached_config(dir);
  if (!previous) return previous.error();
  bool adopted = previous->has_value();
  if (adopted && (*previous)->hook != opts.hook && (*previous)->hook != EDGESHED_HOOK_NONE) {
    return make_error(opts.iface + " is attached at hook " +
                      std::string(names::name_of(names::kHooks, (*previous)->hook)) +
                      "; run `edgeshed detach --iface " + opts.iface + "` before attaching at " +
                      std::string(names::name_of(names::kHooks, opts.hook)));
  }

  // The host's limits are created by the first interface and taken over by
  // the next; the last one's detach removes them.
  auto root = lock_pin_root();
  if (!root) return root.error();
  if (auto s = make_private_dir(host_pin_dir()); !s) return s.error();
  // A program already on the XDP hook is chained behind ours.
  std::optional<XdpNeighbour> neighbour;
  if (opts.hook != EDGESHED_HOOK_TC && !path_exists(dir + "/" + kXdpLinkPin) && !xdp_chained(dir)) {
    auto found = xdp_neighbour(*ifindex, opts.hook, opts.iface);
    if (!found) return found.error();
    neighbour = *found;
  }
  auto skel = Skeleton::load(dir, link->framing, opts.hook == EDGESHED_HOOK_XDP ? *ifindex : 0);
  root->reset();
  if (!skel) return skel.error();
  auto maps = Maps::from_skeleton(*skel);
  if (!maps) return maps.error();

  edgeshed_config cfg{};
  if (adopted) cfg = **previous;
  cfg.abi_version = EDGESHED_ABI_VERSION;
  cfg.mode = opts.mode;
  cfg.action = opts.action;
  cfg.draw = opts.draw;
  cfg.heartbeat_timeout_ns = opts.heartbeat_timeout_ns;
  cfg.rst_per_sec_per_cpu = opts.rst_per_sec_per_cpu;
  cfg.rst_reflect = opts.rst_reflect;
  cfg.events_per_sec_per_cpu = opts.events_per_sec_per_cpu;
  cfg.event_sample = opts.event_sample;
  cfg.hash_prefix4 = static_cast<uint8_t>(opts.hash_prefix4);
  cfg.hash_prefix6 = static_cast<uint8_t>(opts.hash_prefix6);
  // Our namespace is the interface's: if_nametoindex found it here.
  struct stat ns {};
  if (stat("/proc/self/ns/net", &ns) != 0) {
    return make_error("cannot identify this network namespace: " + errno_text(errno));
  }
  cfg.netns_ino = static_cast<uint32_t>(ns.st_ino);
  std::copy(link->mac.begin(), link->mac.end(), cfg.if_mac);
  cfg.hook = EDGESHED_HOOK_NONE;  // set once the hook holds our program
  // Transit is told apart from the first SYN on: the tries are filled
  // before the check is on, and the check before the program runs.
  auto destinations = DestinationMaps::from_skeleton(*skel);
  if (!destinations) return destinations.error();
  auto wanted = host_destinations(opts.destinations);
  if (!wanted) return wanted.error();
  add_local_destinations(*wanted, opts.service_routes);
  if (auto s = destinations->replace(*wanted); !s) return s.error();
  cfg.flags |= EDGESHED_CFG_F_DESTINATIONS;
  cfg.flags &= ~EDGESHED_CFG_F_RX_VLAN_STRIPPED;  // an adopted config's is of its attach
  if (opts.hook == EDGESHED_HOOK_XDP) {
    auto hidden = vlan_tags_hidden_from_xdp(opts.iface, *ifindex);
    if (!hidden) return hidden.error();
    if (*hidden) cfg.flags |= EDGESHED_CFG_F_RX_VLAN_STRIPPED;
  }
  if (!adopted) {
    if (auto s = maps->write_config(cfg); !s) return s.error();
  }
  if (opts.ports) {
    if (auto s = maps->set_ports(*opts.ports); !s) return s.error();
  }

  if (auto s = attach_tracker(*skel, dir); !s) return s.error();
  auto seed = InflightSeed::from_skeleton(*skel);
  if (!seed) return seed.error();
  if (auto s = seed->run(); !s) return s.error();
  std::string xdp_way;
  if (opts.hook == EDGESHED_HOOK_TC) {
    auto created = attach_tc(*skel, *ifindex, opts);
    if (!created) return created.error();
    if (*created) cfg.flags |= EDGESHED_CFG_F_OWNS_QDISC;
  } else {
    auto way = attach_xdp(*skel, *ifindex, opts, dir, neighbour);
    if (!way) return way.error();
    xdp_way = std::move(*way);
  }
  cfg.hook = opts.hook;
  if (auto s = maps->write_config(cfg); !s) {
    // The pinned config does not name the hook yet, so detach would not
    // know to remove the filter.
    if (!adopted && opts.hook == EDGESHED_HOOK_TC) {
      (void)remove_tc(*ifindex, (cfg.flags & EDGESHED_CFG_F_OWNS_QDISC) != 0);
    }
    return s.error();
  }
  auto requests = RequestFilter::create(
      opts.iface, skel->measures_response() ? bpf_program__fd((*skel)->progs.edgeshed_refuse) : -1);
  if (!requests) return requests.error();
  auto idle = IdleConnections::from_skeleton(*skel);
  if (!idle) return idle.error();
  auto timers = RequestTimers::from_skeleton(*skel, dir);
  if (!timers) return timers.error();
  return Attached{std::move(*maps), std::move(*seed),   std::move(*requests),
                  std::move(*idle), std::move(*timers), std::move(*destinations),
                  adopted,          std::move(xdp_way)};
}

}  // namespace

Status detach(const std::string& iface) {
  if (auto s = require_capabilities(); !s) return s;
  std::string dir = pin_dir_for(iface);
  if (!path_exists(dir)) return make_error("nothing attached on " + iface + " (no " + dir + ")");

  // Detach is also how an operator removes a data plane of another version,
  // so only a config of our ABI is trusted for what to undo; otherwise the
  // filter is removed by its handle and a clsact qdisc is left alone.
  edgeshed_config cfg{};
  if (Fd fd(bpf_obj_get((dir + "/es_config").c_str())); fd.valid()) {
    uint32_t zero = 0;
    bpf_map_lookup_elem(fd.get(), &zero, &cfg);
  }
  const bool our_abi = cfg.abi_version == EDGESHED_ABI_VERSION;
  std::string problems, notes;
  unsigned idx = if_nametoindex(iface.c_str());
  if (idx != 0) {
    // The request filter may sit beside either hook, in a qdisc it created.
    problems += remove_request_filter(static_cast<int>(idx));
    if (cfg.hook == EDGESHED_HOOK_TC || !our_abi || (cfg.flags & EDGESHED_CFG_F_OWNS_QDISC)) {
      problems +=
          remove_tc(static_cast<int>(idx), our_abi && (cfg.flags & EDGESHED_CFG_F_OWNS_QDISC) != 0);
    }
  }
  // Before the pins go: the slot holds the program to give the hook back to.
  if (idx != 0 && xdp_chained(dir)) problems += unchain_xdp(static_cast<int>(idx), dir);
  for (const char* link_pin : kLinkPins) {
    std::string pin = dir + "/" + link_pin;
    if (Fd link(bpf_obj_get(pin.c_str())); link.valid()) bpf_link_detach(link.get());
  }
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().filename().string().rfind(kCgroupLinkPrefix, 0) == 0) {
      if (Fd link(bpf_obj_get(entry.path().c_str())); link.valid()) bpf_link_detach(link.get());
    }
  }
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (unlink(entry.path().c_str()) != 0) {
      problems += " " + entry.path().string() + ": " + errno_text(errno) + ";";
    }
  }
  if (rmdir(dir.c_str()) != 0) problems += " " + dir + ": " + errno_text(errno) + ";";
  // Under the pin root's lock: no interface attaches meanwhile.
  auto root = lock_pin_root();
  problems += root ? remove_host_pins_if_last() : " " + root.error().message + ";";
  rmdir(EDGESHED_PIN_ROOT);  // only succeeds once no interface is left
  if (!problems.empty()) return make_error("detach " + iface + " left:" + problems);
  return {};
}

namespace {

// Takes dir's flock, waiting out a writer (a command's write takes
// milliseconds); a daemon holds it for its life, and is what is left after
// the wait. Without the wait, a daemon starting beside such a write, or two
// writers, would fail at random.
Result<Fd> take_lock(const std::string& dir, const std::string& held_by_daemon) {
  Fd fd(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return make_error("cannot open " + dir + ": " + errno_text(errno));
  const auto deadline = std::chrono::steady_clock::now() + kInterfaceLockWait;
  while (flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK) return make_error("cannot lock " + dir + ": " + errno_text(errno));
    if (std::chrono::steady_clock::now() >= deadline) return make_error(held_by_daemon);
    std::this_thread::sleep_for(kLockPoll);
  }
  return fd;
}

}  // namespace

Result<Fd> lock_interface(const std::string& iface) {
  if (auto s = require_capabilities(); !s) return s.error();
  if (auto s = ensure_bpffs(); !s) return s.error();
  if (auto s = make_private_dir(EDGESHED_PIN_ROOT); !s) return s.error();
  const std::string dir = pin_dir_for(iface);
  if (auto s = make_private_dir(dir); !s) return s.error();
  return take_lock(dir, "another edgeshed daemon is running on " + iface +
                            " (it holds the lock on " + dir +
                            "); stop it first, `edgeshed status` shows it");
}

Result<Fd> lock_attached_interface(const std::string& iface) {
  if (auto s = require_capabilities(); !s) return s.error();
  const std::string dir = pin_dir_for(iface);
  if (!path_exists(dir)) return make_error("edgeshed is not attached to " + iface);
  if (auto s = owned_by_us(dir); !s) return s.error();
  return take_lock(dir,
                   "a running daemon manages " + iface + " (it holds the lock on " + dir + ")");
}

bool interface_locked(const std::string& iface) {
  Fd fd(open(pin_dir_for(iface).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return false;
  if (flock(fd.get(), LOCK_EX | LOCK_NB) == 0) return false;  // released with the fd
  return errno == EWOULDBLOCK;
}

}  // namespace edgeshed
