#include "dataplane/idle_connections.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "dataplane/errno_message.h"
#include "edgeshed.skel.h"

namespace edgeshed {

namespace {

Result<Fd> dup_fd(int fd, const char* what) {
  Fd copy(fcntl(fd, F_DUPFD_CLOEXEC, 0));
  if (!copy.valid())
    return make_error(std::string("cannot keep ") + what + ": " + errno_text(errno));
  return copy;
}

// Runs one walk of prog to its end; what it wrote.
Result<std::string> walk(int prog, const char* what) {
  Fd link(bpf_link_create(prog, 0, BPF_TRACE_ITER, nullptr));
  if (!link.valid()) {
    return make_error(std::string("cannot attach the ") + what +
                      " (iter/tcp): " + errno_text(errno));
  }
  Fd it(bpf_iter_create(link.get()));
  if (!it.valid())
    return make_error(std::string("cannot start the ") + what + ": " + errno_text(errno));
  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(it.get(), buf, sizeof(buf));
    if (n == 0) return out;
    if (n > 0) {
      out.append(buf, static_cast<size_t>(n));
    } else if (errno != EINTR) {
      return make_error(std::string("the ") + what + " failed: " + errno_text(errno));
    }
  }
}

}  // namespace

Result<IdleConnections> IdleConnections::from_skeleton(const Skeleton& skel) {
  if (!skel.reclaims_idle()) return IdleConnections(Fd(), Fd(), Fd());
  auto list = dup_fd(bpf_program__fd(skel->progs.edgeshed_idle), "the idle walk");
  if (!list) return list.error();
  auto reclaim = dup_fd(bpf_program__fd(skel->progs.edgeshed_reclaim), "the reclaim walk");
  if (!reclaim) return reclaim.error();
  auto chosen = dup_fd(bpf_map__fd(skel->maps.es_reclaim), "es_reclaim");
  if (!chosen) return chosen.error();
  return IdleConnections(std::move(*list), std::move(*reclaim), std::move(*chosen));
}

Result<std::vector<IdleConnection>> IdleConnections::list(const Everywhere& everywhere) const {
  if (!supported()) return make_error("this kernel cannot reclaim idle connections");
  std::vector<IdleConnection> idle;
  auto s = everywhere([&]() -> Status {
    auto out = walk(list_prog_.get(), "idle walk");
    if (!out) return out.error();
    if (out->size() % sizeof(edgeshed_idle_conn) != 0) {
      return make_error("the idle walk wrote " + std::to_string(out->size()) +
                        " bytes, not whole records");
    }
    for (size_t i = 0; i < out->size() / sizeof(edgeshed_idle_conn); ++i) {
      edgeshed_idle_conn rec;
      std::memcpy(&rec, out->data() + i * sizeof(rec), sizeof(rec));
      idle.push_back({rec.cookie, std::chrono::nanoseconds(rec.idle_ns), rec.port, rec.group});
    }
    return {};
  });
  if (!s) return s.error();
  return idle;
}

Status IdleConnections::reclaim(const std::vector<uint64_t>& cookies,
                                const Everywhere& everywhere) const {
  if (!supported()) return make_error("this kernel cannot reclaim idle connections");
  if (cookies.size() > EDGESHED_RECLAIM_BATCH) {
    return make_error("at most " + std::to_string(EDGESHED_RECLAIM_BATCH) +
                      " connections are reclaimed at a time, not " +
                      std::to_string(cookies.size()));
  }
  const uint8_t chosen = 1;
  for (const uint64_t cookie : cookies) {
    if (bpf_map_update_elem(chosen_.get(), &cookie, &chosen, BPF_ANY) != 0) {
      return make_error("cannot write es_reclaim: " + errno_text(errno));
    }
  }
  auto s = everywhere([this]() -> Status {
    auto out = walk(reclaim_prog_.get(), "reclaim walk");
    if (!out) return out.error();
    return {};
  });
  // A cookie the walks did not meet (closed meanwhile) must not wait for a
  // later socket of the same cookie: cookies are not reused, but the map
  // must be empty for the next batch.
  for (const uint64_t cookie : cookies) bpf_map_delete_elem(chosen_.get(), &cookie);
  return s;
}

}  // namespace edgeshed
