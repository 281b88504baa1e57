#include "dataplane/request_timers.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "dataplane/errno_message.h"
#include "dataplane/pin_dirs.h"
#include "edgeshed.skel.h"

namespace edgeshed {
namespace {

// The program's own fd, which outlives the skeleton.
Result<Fd> dup_program(const bpf_program* prog) {
  Fd fd(fcntl(bpf_program__fd(prog), F_DUPFD_CLOEXEC, 0));
  if (!fd.valid()) {
    return make_error(std::string("cannot keep the program ") + bpf_program__name(prog) + ": " +
                      errno_text(errno));
  }
  return fd;
}

// A cgroup v2 folder's id, as its links' pins are named.
Result<uint64_t> cgroup_id(const std::string& folder) {
  struct statfs fs {};
  struct stat st {};
  if (statfs(folder.c_str(), &fs) != 0 || stat(folder.c_str(), &st) != 0) {
    return make_error("cannot read the cgroup " + folder + ": " + errno_text(errno));
  }
  if (fs.f_type != CGROUP2_SUPER_MAGIC) {
    return make_error(folder + " is not a cgroup v2 folder (the request timers need one)");
  }
  return static_cast<uint64_t>(st.st_ino);
}

std::string cgroup_pin(const std::string& dir, uint64_t id, const char* way) {
  return dir + "/" + kCgroupLinkPrefix + std::to_string(id) + "_" + way;
}

// Pins prog's new link to the cgroup as pin, or gives the pinned one prog.
Status link_at(int prog_fd, int cgroup_fd, bpf_attach_type type, const std::string& pin,
               bool replace) {
  if (path_exists(pin)) {
    if (!replace) return {};
    Fd link(bpf_obj_get(pin.c_str()));
    if (!link.valid() || bpf_link_update(link.get(), prog_fd, nullptr) != 0) {
      return make_error("cannot renew " + pin + ": " + errno_text(errno));
    }
    return {};
  }
  Fd link(bpf_link_create(prog_fd, cgroup_fd, type, nullptr));
  if (!link.valid()) return make_error("cannot link " + pin + ": " + errno_text(errno));
  if (bpf_obj_pin(link.get(), pin.c_str()) != 0) {
    return make_error("cannot pin " + pin + ": " + errno_text(errno));
  }
  return {};
}

void unlink_pin(const std::string& pin) {
  if (Fd link(bpf_obj_get(pin.c_str())); link.valid()) bpf_link_detach(link.get());
  unlink(pin.c_str());
}

}  // namespace

Result<RequestTimers> RequestTimers::from_skeleton(const Skeleton& skel, std::string pin_dir) {
  if (!skel.measures_response()) return RequestTimers(std::move(pin_dir), Fd(), Fd(), Fd(), Fd());
  const auto& progs = skel->progs;
  auto request = dup_program(progs.edgeshed_request);
  if (!request) return request.error();
  auto response = dup_program(progs.edgeshed_response);
  if (!response) return response.error();
  auto in = dup_program(progs.edgeshed_request_cg);
  if (!in) return in.error();
  auto out = dup_program(progs.edgeshed_response_cg);
  if (!out) return out.error();
  return RequestTimers(std::move(pin_dir), std::move(*request), std::move(*response),
                       std::move(*in), std::move(*out));
}

Result<bool> RequestTimers::link_cgroup(const std::string& folder) {
  if (!supported()) return make_error("this kernel lacks the request accounting (Linux 6.11)");
  struct stat st {};
  if (stat(folder.c_str(), &st) != 0) {
    linked_.erase(folder);
    return false;
  }
  // Tried once per cgroup, linked or not: a folder that cannot be linked
  // is not tried again every tick.
  linked_[folder] = static_cast<uint64_t>(st.st_ino);
  auto id = cgroup_id(folder);
  if (!id) return id.error();
  Fd cgroup(open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!cgroup.valid()) return make_error("cannot open " + folder + ": " + errno_text(errno));
  const std::string in = cgroup_pin(pin_dir_, *id, "in");
  const std::string out = cgroup_pin(pin_dir_, *id, "out");
  const bool renew = !current_.contains(in);
  // Ingress first: a request seen to arrive is answered at egress.
  if (auto s = link_at(cgroup_in_.get(), cgroup.get(), BPF_CGROUP_INET_INGRESS, in, renew); !s) {
    return s.error();
  }
  if (auto s = link_at(cgroup_out_.get(), cgroup.get(), BPF_CGROUP_INET_EGRESS, out, renew); !s) {
    return s.error();
  }
  current_.insert(in);
  current_.insert(out);
  return true;
}

bool RequestTimers::relink_needed(const std::string& folder) const {
  const auto it = linked_.find(folder);
  struct stat st {};
  if (stat(folder.c_str(), &st) != 0) return it != linked_.end();
  return it == linked_.end() || it->second != static_cast<uint64_t>(st.st_ino);
}

Status RequestTimers::unlink_cgroups_but(const std::set<std::string>& folders) {
  std::set<std::string> kept;
  for (const auto& folder : folders) {
    if (auto id = cgroup_id(folder)) {
      kept.insert(cgroup_pin(pin_dir_, *id, "in"));
      kept.insert(cgroup_pin(pin_dir_, *id, "out"));
    }
  }
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(pin_dir_, ec)) {
    const std::string pin = entry.path().string();
    if (entry.path().filename().string().rfind(kCgroupLinkPrefix, 0) != 0 || kept.contains(pin)) {
      continue;
    }
    unlink_pin(pin);
    current_.erase(pin);
  }
  if (ec) return make_error("cannot list " + pin_dir_ + ": " + ec.message());
  return {};
}

bool RequestTimers::tracepoints_linked() const {
  return path_exists(pin_dir_ + "/" + kRequestLinkPin) &&
         path_exists(pin_dir_ + "/" + kResponseLinkPin);
}

Status RequestTimers::link_tracepoints() const {
  if (!supported()) return {};
  for (const auto& [prog, name] :
       {std::pair{&request_, kRequestLinkPin}, std::pair{&response_, kResponseLinkPin}}) {
    const std::string pin = pin_dir_ + "/" + name;
    if (path_exists(pin)) continue;
    Fd link(bpf_raw_tracepoint_open(nullptr, prog->get()));
    if (!link.valid()) return make_error("cannot link " + pin + ": " + errno_text(errno));
    if (bpf_obj_pin(link.get(), pin.c_str()) != 0) {
      return make_error("cannot pin " + pin + ": " + errno_text(errno));
    }
  }
  return {};
}

void RequestTimers::unlink_tracepoints() const {
  for (const char* name : {kRequestLinkPin, kResponseLinkPin}) unlink_pin(pin_dir_ + "/" + name);
}

}  // namespace edgeshed
