// Reader of the data plane's sampled shed events (the es_events ring
// buffer). One reader per ring: two readers would split the events.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "common/fd.h"
#include "common/result.h"
#include "edgeshed/abi.h"

struct ring_buffer;

namespace edgeshed {

struct RingBufferDeleter {
  void operator()(ring_buffer* rb) const;
};

class EventReader {
 public:
  using Handler = std::function<void(const edgeshed_event&)>;

  static Result<EventReader> open_pinned(const std::string& pin_dir, Handler handler);
  // Takes a map fd of its own (dup it first if the caller keeps one).
  static Result<EventReader> from_fd(Fd map_fd, Handler handler);

  // Waits up to timeout for events and hands each to the handler; returns
  // how many were read.
  Result<int> poll(std::chrono::milliseconds timeout);

 private:
  EventReader() = default;
  static int on_sample(void* ctx, void* data, size_t size);

  Fd map_;
  // The handler lives on the heap: libbpf keeps a pointer to it.
  std::unique_ptr<Handler> handler_;
  std::unique_ptr<ring_buffer, RingBufferDeleter> ring_;
};

}  // namespace edgeshed
