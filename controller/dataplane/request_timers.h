// Where an interface's data plane times requests (abi.h, enum
// edgeshed_port_timers): the tracepoints, which every socket of the host
// passes, linked only while a protected port needs them; and the cgroup_skb
// programs, linked to the cgroups of the ports timed there, so that the
// host's other sockets pay nothing for a send or a receive.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "common/fd.h"
#include "common/result.h"
#include "dataplane/skeleton.h"

namespace edgeshed {

// The tracepoint timers' link pins in an interface's pin directory.
inline constexpr const char* kRequestLinkPin = "request_link";
inline constexpr const char* kResponseLinkPin = "response_link";
// A cgroup's links are pinned as <prefix><cgroup id>_in and _out.
inline constexpr const char* kCgroupLinkPrefix = "cgroup_";

class RequestTimers {
 public:
  // The timer programs of a loaded data plane, for links made in pin_dir;
  // where the kernel lacks the request accounting (Linux 6.11), an
  // instance that times nothing.
  static Result<RequestTimers> from_skeleton(const Skeleton& skel, std::string pin_dir);

  bool supported() const { return cgroup_in_.valid(); }

  // Links the cgroup timers to the cgroup v2 folder, or gives a linked
  // one's links this data plane's programs (a daemon adopting the data
  // plane), before its ports are switched to them; false where the folder
  // is gone (its service with it: nothing to time).
  Result<bool> link_cgroup(const std::string& folder);
  // Unlinks every cgroup but those of folders (after their ports left them).
  Status unlink_cgroups_but(const std::set<std::string>& folders);
  // Whether the folder is not the cgroup this instance last tried to link
  // under its name: never tried, gone since, or made anew (a service
  // restarted by systemd gets a new cgroup of the same name).
  bool relink_needed(const std::string& folder) const;
  // Links the tracepoint timers if they are not; before a port needs them.
  Status link_tracepoints() const;
  // Unlinks them; once no port needs them.
  void unlink_tracepoints() const;
  // Whether the tracepoint timers are linked.
  bool tracepoints_linked() const;

 private:
  RequestTimers(std::string pin_dir, Fd request, Fd response, Fd cgroup_in, Fd cgroup_out)
      : pin_dir_(std::move(pin_dir)),
        request_(std::move(request)),
        response_(std::move(response)),
        cgroup_in_(std::move(cgroup_in)),
        cgroup_out_(std::move(cgroup_out)) {}
  std::string pin_dir_;
  Fd request_, response_, cgroup_in_, cgroup_out_;
  // The cgroup links whose programs are this instance's.
  std::set<std::string> current_;
  // The id each folder had when this instance last tried to link it.
  std::map<std::string, uint64_t> linked_;
};

}  // namespace edgeshed
