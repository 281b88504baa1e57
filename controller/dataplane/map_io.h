// Reads and writes of one map's entries, with the error naming the map:
// shared by the files that implement Maps.
#pragma once

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/fd.h"
#include "common/result.h"
#include "dataplane/errno_message.h"

namespace edgeshed::map_io {

template <class T>
Status lookup(const Fd& fd, const void* key, T* value, const char* what) {
  if (bpf_map_lookup_elem(fd.get(), key, value)) {
    return make_error(std::string("cannot read ") + what + ": " + errno_text(errno));
  }
  return {};
}

// Up to values.size() entries of a map from its first key, in one syscall;
// how many it read. ENOENT only says the walk reached the end.
template <class T>
Result<uint32_t> lookup_batch(const Fd& fd, std::span<uint32_t> keys, std::span<T> values,
                              const char* what) {
  __u32 count = static_cast<__u32>(values.size());
  __u32 out_batch = 0;
  bpf_map_batch_opts opts{};
  opts.sz = sizeof(opts);
  if (bpf_map_lookup_batch(fd.get(), nullptr, &out_batch, keys.data(), values.data(), &count,
                           &opts) != 0 &&
      errno != ENOENT) {
    return make_error(std::string("cannot read ") + what + ": " + errno_text(errno));
  }
  return count;
}

// Every entry of an array map; it walks in key order, so values[i] is key i's.
template <class T, size_t N>
Status lookup_all(const Fd& fd, std::array<T, N>& values, const char* what) {
  std::array<uint32_t, N> keys{};
  auto count = lookup_batch(fd, std::span<uint32_t>(keys), std::span<T>(values), what);
  if (!count) return count.error();
  if (*count != N) {
    return make_error(std::string(what) + ": read " + std::to_string(*count) + " entries of " +
                      std::to_string(N));
  }
  return {};
}

// How many values a per-CPU map's entry holds.
inline Result<size_t> possible_cpus() {
  const int cpus = libbpf_num_possible_cpus();
  if (cpus <= 0) return make_error(std::string("cannot count CPUs: ") + errno_text(cpus));
  return static_cast<size_t>(cpus);
}

// The sum over the CPUs of a per-CPU map's __u64 entry, modulo 2^64.
inline Result<uint64_t> lookup_percpu_sum(const Fd& fd, uint32_t key, const char* what) {
  const auto cpus = possible_cpus();
  if (!cpus) return cpus.error();
  std::vector<uint64_t> values(*cpus);
  if (auto s = lookup(fd, &key, values.data(), what); !s) return s.error();
  uint64_t sum = 0;
  for (uint64_t v : values) sum += v;
  return sum;
}

inline Status update(const Fd& fd, const void* key, const void* value, const char* what) {
  if (bpf_map_update_elem(fd.get(), key, value, BPF_ANY)) {
    return make_error(std::string("cannot write ") + what + ": " + errno_text(errno));
  }
  return {};
}

}  // namespace edgeshed::map_io
