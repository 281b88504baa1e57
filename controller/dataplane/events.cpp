#include "dataplane/events.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <cerrno>

#include "dataplane/errno_message.h"

namespace edgeshed {

void RingBufferDeleter::operator()(ring_buffer* rb) const { ring_buffer__free(rb); }

Result<EventReader> EventReader::open_pinned(const std::string& pin_dir, Handler handler) {
  std::string path = pin_dir + "/es_events";
  Fd fd(bpf_obj_get(path.c_str()));
  if (!fd.valid()) {
    return make_error(
        "cannot open " + path + ": " + errno_text(errno) +
        (errno == ENOENT ? " (is the interface attached by this edgeshed version?)" : ""));
  }
  return from_fd(std::move(fd), std::move(handler));
}

Result<EventReader> EventReader::from_fd(Fd map_fd, Handler handler) {
  EventReader r;
  r.map_ = std::move(map_fd);
  r.handler_ = std::make_unique<Handler>(std::move(handler));
  r.ring_.reset(ring_buffer__new(r.map_.get(), &EventReader::on_sample, r.handler_.get(), nullptr));
  if (!r.ring_) return make_error("cannot read the event ring buffer: " + errno_text(errno));
  return r;
}

int EventReader::on_sample(void* ctx, void* data, size_t size) {
  if (size < sizeof(edgeshed_event)) return 0;  // not ours: skip, keep reading
  edgeshed_event ev{};
  __builtin_memcpy(&ev, data, sizeof(ev));
  (*static_cast<Handler*>(ctx))(ev);
  return 0;
}

Result<int> EventReader::poll(std::chrono::milliseconds timeout) {
  int n = ring_buffer__poll(ring_.get(), static_cast<int>(timeout.count()));
  if (n < 0 && n != -EINTR) return make_error("reading events: " + errno_text(-n));
  return n < 0 ? 0 : n;
}

}  // namespace edgeshed
