#include "dataplane/destinations.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "dataplane/errno_message.h"
#include "dataplane/in_netns.h"
#include "dataplane/local_routes.h"
#include "dataplane/map_fd.h"
#include "dataplane/skeleton.h"
#include "edgeshed.skel.h"

namespace edgeshed {
namespace {

template <class Key>
Key trie_key(const IpPrefix& p) {
  Key key{};
  key.prefixlen = p.length;
  std::memcpy(key.addr, p.address.data(), sizeof(key.addr));
  return key;
}

template <class Key>
IpPrefix prefix_of(const Key& key, IpFamily family) {
  IpPrefix p;
  p.family = family;
  p.length = key.prefixlen;
  std::memcpy(p.address.data(), key.addr, sizeof(key.addr));
  return p;
}

template <class Key>
Status read_trie(const Fd& fd, IpFamily family, std::vector<Destination>& out) {
  Key key{};
  const Key* prev = nullptr;
  Key next{};
  while (bpf_map_get_next_key(fd.get(), prev, &next) == 0) {
    edgeshed_dst_value value{};
    if (bpf_map_lookup_elem(fd.get(), &next, &value) == 0) {
      out.push_back({prefix_of(next, family), value.kind, value.netns_cookie});
    }
    key = next;
    prev = &key;
  }
  if (errno != ENOENT) return make_error("cannot read destinations: " + errno_text(errno));
  return {};
}

bool is_v4(const Destination& d) { return d.prefix.family == IpFamily::kV4; }

}  // namespace

Result<DestinationMaps> DestinationMaps::from_skeleton(const Skeleton& skel) {
  auto dst4 = dup_map_fd(skel->maps.es_dst4);
  if (!dst4) return dst4.error();
  auto dst6 = dup_map_fd(skel->maps.es_dst6);
  if (!dst6) return dst6.error();
  return DestinationMaps(std::move(*dst4), std::move(*dst6));
}

Result<DestinationMaps> DestinationMaps::open_pinned(const std::string& pin_dir) {
  auto dst4 = open_pin(pin_dir, "es_dst4");
  if (!dst4) return dst4.error();
  auto dst6 = open_pin(pin_dir, "es_dst6");
  if (!dst6) return dst6.error();
  return DestinationMaps(std::move(*dst4), std::move(*dst6));
}

Result<std::vector<Destination>> DestinationMaps::read() const {
  std::vector<Destination> out;
  if (auto s = read_trie<edgeshed_lpm_v4>(dst4_, IpFamily::kV4, out); !s) return s.error();
  if (auto s = read_trie<edgeshed_lpm_v6>(dst6_, IpFamily::kV6, out); !s) return s.error();
  return out;
}

Status DestinationMaps::replace(const std::vector<Destination>& wanted) const {
  if (wanted.size() > EDGESHED_MAX_DESTINATIONS) {
    return make_error("too many destinations: " + std::to_string(wanted.size()) + ", at most " +
                      std::to_string(EDGESHED_MAX_DESTINATIONS));
  }
  auto current = read();
  if (!current) return current.error();
  for (const auto& d : wanted) {
    edgeshed_dst_value value{};
    value.kind = d.kind;
    value.netns_cookie = d.netns_cookie;
    int err = 0;
    if (is_v4(d)) {
      const auto key = trie_key<edgeshed_lpm_v4>(d.prefix);
      err = bpf_map_update_elem(dst4_.get(), &key, &value, BPF_ANY);
    } else {
      const auto key = trie_key<edgeshed_lpm_v6>(d.prefix);
      err = bpf_map_update_elem(dst6_.get(), &key, &value, BPF_ANY);
    }
    if (err) {
      return make_error("cannot write destination " + to_string(d.prefix) + ": " +
                        errno_text(errno));
    }
  }
  for (const auto& d : *current) {
    const bool kept = std::any_of(wanted.begin(), wanted.end(),
                                  [&d](const Destination& w) { return w.prefix == d.prefix; });
    if (kept) continue;
    int err = 0;
    if (is_v4(d)) {
      const auto key = trie_key<edgeshed_lpm_v4>(d.prefix);
      err = bpf_map_delete_elem(dst4_.get(), &key);
    } else {
      const auto key = trie_key<edgeshed_lpm_v6>(d.prefix);
      err = bpf_map_delete_elem(dst6_.get(), &key);
    }
    if (err && errno != ENOENT) {
      return make_error("cannot remove destination " + to_string(d.prefix) + ": " +
                        errno_text(errno));
    }
  }
  return {};
}

Result<std::vector<Destination>> host_destinations(const std::vector<IpPrefix>& configured) {
  auto local = read_local_routes();
  if (!local) return make_error("cannot read the host's local routes: " + local.error().message);
  // The host's own addresses are its namespace's: a port it serves beside
  // a container finds its service by them.
  auto cookie = current_netns_cookie();
  if (!cookie) return cookie.error();
  std::vector<Destination> out;
  out.reserve(configured.size() + local->size());
  for (const auto& p : configured) out.push_back({p, EDGESHED_DST_CONFIGURED, *cookie});
  std::vector<Destination> own;
  own.reserve(local->size());
  for (const auto& p : *local) own.push_back({p, EDGESHED_DST_LOCAL, *cookie});
  add_local_destinations(out, own);
  return out;
}

void add_local_destinations(std::vector<Destination>& out, const std::vector<Destination>& routes) {
  for (const auto& r : routes) {
    const bool listed = std::any_of(out.begin(), out.end(),
                                    [&r](const Destination& d) { return d.prefix == r.prefix; });
    if (!listed) out.push_back(r);
  }
}

Status apply_destinations(const Maps& maps, const DestinationMaps& tries,
                          const std::vector<Destination>& destinations) {
  if (auto s = tries.replace(destinations); !s) return s;
  auto cfg = maps.read_config();
  if (!cfg) return cfg.error();
  if (cfg->flags & EDGESHED_CFG_F_DESTINATIONS) return {};
  cfg->flags |= EDGESHED_CFG_F_DESTINATIONS;
  return maps.write_config(*cfg);
}

}  // namespace edgeshed
