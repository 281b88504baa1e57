// A loaded data plane (no attach, no pins) and BPF_PROG_TEST_RUN on frames.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>

#include "common/packet.h"
#include "dataplane/maps.h"
#include "dataplane/skeleton.h"

namespace edgeshed::testing {

enum class Entry { kXdp, kTc };
enum class Verdict { kPass, kDrop, kTx, kOther };

std::string entry_name(const ::testing::TestParamInfo<Entry>& info);

struct RunResult {
  Verdict verdict;
  uint32_t retval;
  Bytes out;
};

// The ports every test uses: 80 normal, 443 critical, 8080 background.
inline constexpr uint16_t kNormalPort = 80;
inline constexpr uint16_t kCriticalPort = 443;
inline constexpr uint16_t kBackgroundPort = 8080;
inline constexpr uint16_t kUnprotectedPort = 22;

class DataplaneFixture {
 public:
  DataplaneFixture();

  // Runs the frame once through the entry point.
  RunResult run(Entry entry, const Bytes& frame) const;
  // Same, but nullopt when the kernel's test harness refuses the input
  // (a TC run needs a whole IP header after the link layer).
  std::optional<RunResult> try_run(Entry entry, const Bytes& frame) const;

  // Enforce, drop, no heartbeat timeout, everything admitted.
  void reset_config() const;
  void set_config(const edgeshed_config& cfg) const;
  edgeshed_config config() const;
  void set_class_policy(uint32_t class_id, const edgeshed_class_policy& pol,
                        uint32_t salt = 0) const;
  void set_heartbeat(uint64_t ns) const;
  void set_inflight(uint32_t class_id, uint64_t count) const;
  edgeshed_stats stats() const;

  const Skeleton& skeleton() const { return *skel_; }
  const Maps& maps() const { return *maps_; }

 private:
  std::optional<Skeleton> skel_;
  std::optional<Maps> maps_;
  mutable edgeshed_policy_set policy_{};
};

// Class counters minus an earlier snapshot.
uint64_t class_delta(const edgeshed_stats& after, const edgeshed_stats& before, uint32_t class_id,
                     int counter);
uint64_t global_delta(const edgeshed_stats& after, const edgeshed_stats& before, int counter);
// All class counters of all classes, summed (what a decision touched).
uint64_t all_class_counters(const edgeshed_stats& s);

}  // namespace edgeshed::testing
