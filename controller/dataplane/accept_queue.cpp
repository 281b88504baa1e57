#include "dataplane/accept_queue.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "accept_queue.skel.h"
#include "common/fd.h"
#include "dataplane/errno_message.h"
#include "dataplane/listen_queues.h"
#include "edgeshed/abi.h"

namespace edgeshed {

void AcceptQueueReader::SkeletonDeleter::operator()(accept_queue_bpf* s) const {
  accept_queue_bpf__destroy(s);
}
void AcceptQueueReader::LinkDeleter::operator()(bpf_link* l) const { bpf_link__destroy(l); }

Result<AcceptQueueReader> AcceptQueueReader::open(int ports_fd, int sk_state_fd) {
  AcceptQueueReader r;
  r.skel_.reset(accept_queue_bpf__open());
  if (!r.skel_) return make_error("cannot open the accept-queue iterator: " + errno_text(errno));
  if (int err = bpf_map__reuse_fd(r.skel_->maps.es_ports, ports_fd); err) {
    return make_error("cannot share the port map with the iterator: " + errno_text(err));
  }
  if (int err = bpf_map__reuse_fd(r.skel_->maps.es_sk_state, sk_state_fd); err) {
    return make_error("cannot share the socket-state map with the iterator: " + errno_text(err));
  }
  if (int err = accept_queue_bpf__load(r.skel_.get()); err) {
    return make_error("cannot load the accept-queue iterator (iter/tcp needs Linux 5.9+): " +
                      errno_text(err));
  }
  r.link_.reset(bpf_program__attach_iter(r.skel_->progs.edgeshed_accept_queue, nullptr));
  if (!r.link_) return make_error("cannot attach the accept-queue iterator: " + errno_text(errno));
  r.ports_fd_ = bpf_map__fd(r.skel_->maps.es_ports);
  if (auto probe = r.diag_.read(); !probe) {
    r.use_diag_ = false;
    spdlog::warn("accept queues: {} (is tcp_diag available?); every tick walks all TCP sockets",
                 probe.error().message);
  }
  return r;
}

Result<AcceptQueueReader> AcceptQueueReader::open_pinned(const std::string& pin_dir) {
  Fd ports(bpf_obj_get((pin_dir + "/es_ports").c_str()));
  Fd sk_state(bpf_obj_get((pin_dir + "/es_sk_state").c_str()));
  if (!ports.valid() || !sk_state.valid()) {
    return make_error("cannot open the pinned maps in " + pin_dir + ": " + errno_text(errno));
  }
  return open(ports.get(), sk_state.get());
}

bool AcceptQueueReader::ours(uint16_t port, uint32_t service_ns) const {
  __u32 key = port;
  edgeshed_port value{};
  return bpf_map_lookup_elem(ports_fd_, &key, &value) == 0 &&
         (value.protocols & EDGESHED_PORT_TCP) && value.netns_ino == service_ns;
}

Result<QueueSnapshot> AcceptQueueReader::read(uint32_t service_ns) {
  if (use_diag_) {
    auto listeners = service_ns ? read_listen_queues() : diag_.read();
    if (!listeners) return listeners.error();
    QueueSnapshot snapshot;
    bool waiting = false;
    for (const auto& l : *listeners) {
      if (!ours(l.port, service_ns)) continue;
      auto& q = snapshot[l.port];
      q.depth += l.depth;
      q.max_depth += l.max_depth;
      waiting = waiting || l.depth > 0;
    }
    // Empty queues: nothing waits, so there is no sojourn to measure.
    if (!waiting) return snapshot;
  }
  auto snapshot = walk();
  if (!snapshot) return snapshot;
  // The walk's listeners are any namespace's service on a protected port.
  std::erase_if(*snapshot, [&](const auto& entry) { return !ours(entry.first, service_ns); });
  return snapshot;
}

Result<QueueSnapshot> AcceptQueueReader::walk() const {
  ++walks_;
  Fd iter(bpf_iter_create(bpf_link__fd(link_.get())));
  if (!iter.valid()) return make_error("cannot start the accept-queue walk: " + errno_text(errno));
  QueueSnapshot snapshot;
  std::vector<edgeshed_aq_record> buf(256);
  size_t carry = 0;  // bytes of a record split across reads
  for (;;) {
    auto* bytes = reinterpret_cast<char*>(buf.data());
    ssize_t n = ::read(iter.get(), bytes + carry, buf.size() * sizeof(buf[0]) - carry);
    if (n < 0) {
      if (errno == EINTR) continue;
      return make_error("accept-queue walk failed: " + errno_text(errno));
    }
    if (n == 0) break;
    size_t total = carry + static_cast<size_t>(n);
    size_t records = total / sizeof(edgeshed_aq_record);
    for (size_t i = 0; i < records; ++i) {
      const auto& rec = buf[i];
      auto& q = snapshot[rec.port];
      if (rec.kind == EDGESHED_AQ_LISTENER) {
        q.depth += rec.depth;
        q.max_depth += rec.max_depth;
      } else if (rec.kind == EDGESHED_AQ_WAITING) {
        q.waiting += 1;
        q.oldest_ns = std::max<uint64_t>(q.oldest_ns, rec.waiting_ns);
      }
    }
    carry = total - records * sizeof(edgeshed_aq_record);
    std::memmove(bytes, bytes + records * sizeof(edgeshed_aq_record), carry);
  }
  return snapshot;
}

}  // namespace edgeshed
