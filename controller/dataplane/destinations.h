// The destinations the data plane decides for (es_dst4, es_dst6): the
// host's local routes and the operator's prefixes. Everything else to a
// protected port is transit, passed untouched (bpf/destination.bpf.h).
#pragma once

#include <string>
#include <vector>

#include "common/fd.h"
#include "common/ip_prefix.h"
#include "common/result.h"
#include "dataplane/maps.h"

namespace edgeshed {

class Skeleton;

struct Destination {
  IpPrefix prefix;
  uint32_t kind = EDGESHED_DST_LOCAL;  // enum edgeshed_destination_kind
  // The namespace the address is in (edgeshed_dst_value); 0: none known.
  uint64_t netns_cookie = 0;

  bool operator==(const Destination&) const = default;
};

class DestinationMaps {
 public:
  static Result<DestinationMaps> from_skeleton(const Skeleton& skel);
  static Result<DestinationMaps> open_pinned(const std::string& pin_dir);

  // Makes the tries hold exactly `wanted`: new entries are written before
  // stale ones go, so one in both never disappears, even for a moment.
  Status replace(const std::vector<Destination>& wanted) const;
  Result<std::vector<Destination>> read() const;

 private:
  DestinationMaps(Fd dst4, Fd dst6) : dst4_(std::move(dst4)), dst6_(std::move(dst6)) {}
  Fd dst4_, dst6_;
};

// The host's local routes (read now, in the caller's network namespace)
// and the configured prefixes, as the tries are to hold them.
Result<std::vector<Destination>> host_destinations(const std::vector<IpPrefix>& configured);
// Adds each of routes not listed yet to out, as a local destination.
void add_local_destinations(std::vector<Destination>& out, const std::vector<Destination>& routes);

// Writes destinations into the tries and turns the check on in the config
// (EDGESHED_CFG_F_DESTINATIONS) once they hold them.
Status apply_destinations(const Maps& maps, const DestinationMaps& tries,
                          const std::vector<Destination>& destinations);

}  // namespace edgeshed
