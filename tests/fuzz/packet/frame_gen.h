// Frames for the packet fuzzer: well-formed SYNs of every shape the data
// plane claims to handle, frames with random header fields, random bytes,
// and mutations of any of them. Deterministic for a given seed, so a failing
// frame can be found again from the seed the test prints.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "common/packet.h"

namespace edgeshed::testing {

// Source prefixes the fuzzer installs as class overrides; the generator
// draws sources from them often enough that the LPM path is exercised.
inline constexpr const char* kCriticalPrefix4 = "203.0.113.0/24";
inline constexpr const char* kBackgroundPrefix6 = "2001:db8:ffff::/48";

// Largest frame generated: a full-size Ethernet frame with two tags. Both
// test-run entry points accept it.
inline constexpr size_t kMaxFuzzFrame = 1522;

class FrameGenerator {
 public:
  explicit FrameGenerator(uint64_t seed) : rng_(seed) {}

  // The next frame of the fuzzing mix (see frame_gen.cpp for the shares).
  Bytes next();

  // A well-formed SYN: IPv4 (options) or IPv6 (extension headers, atomic
  // fragment), 0-2 VLAN tags, TCP options and payload, maybe padding.
  Bytes valid_syn();
  // A frame whose header fields are drawn at random (lengths, versions,
  // flags, next headers, ethertypes), built on the same layouts.
  Bytes random_headers();
  // Random bytes behind an ethertype that is IP most of the time.
  Bytes random_bytes();
  // One to four random edits: byte and bit changes, boundary values,
  // truncation, extension, insertion and deletion of bytes.
  Bytes mutate(Bytes frame);

  uint64_t draw(uint64_t below) {
    return std::uniform_int_distribution<uint64_t>(0, below - 1)(rng_);
  }
  bool chance(double p) { return std::bernoulli_distribution(p)(rng_); }

 private:
  std::string random_v4_source();
  std::string random_v6_source();
  uint16_t random_port();
  Bytes random_bytes_of(size_t n);
  Bytes random_quic();
  void mutate_once(Bytes& frame);

  std::mt19937_64 rng_;
};

}  // namespace edgeshed::testing
