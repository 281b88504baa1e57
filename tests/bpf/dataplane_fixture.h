// A loaded data plane (no attach, no pins) and BPF_PROG_TEST_RUN on frames.
#pragma once

#include <bpf/libbpf.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

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
// The coarse clock the data plane reads moves by a jiffy (1 to 10 ms): a
// bound on what a rate grants over an interval may be off by a jiffy's worth.
inline constexpr double kJiffyS = 0.010;
// A class policy that sheds every new connection.
inline constexpr edgeshed_class_policy kShedAll = {EDGESHED_FRAC_ONE, 0, 0, 0, 0, 0};

// What a flood of one frame from two CPUs at once got: the frames sent and
// those that came out with the verdict counted.
struct FloodResult {
  uint64_t sent = 0;
  uint64_t counted = 0;
  double seconds = 0.0;
};

class DataplaneFixture;

// Runs frame through the entry point on CPUs 0 and 1 at once, each for up
// to duration or max_per_cpu runs, counting the results with verdict.
FloodResult flood_two_cpus(const DataplaneFixture& dp, Entry entry, const Bytes& frame,
                           Verdict verdict,
                           std::chrono::milliseconds duration = std::chrono::milliseconds(1000),
                           uint64_t max_per_cpu = 2'000'000);

// The flood drew a limit of rate a second after its burst once, not once
// per CPU: at most burst + rate x (its time + a jiffy) + 2 (one per CPU),
// at least burst + half the rate over its time, and it sent ten times what
// the limit allows, or it never tested it. what names the counted results.
void expect_shared_rate(const FloodResult& flood, uint32_t rate, uint32_t burst, const char* what);

struct BpfLinkDeleter {
  void operator()(bpf_link* l) const { bpf_link__destroy(l); }
};
using BpfLink = std::unique_ptr<bpf_link, BpfLinkDeleter>;

class DataplaneFixture {
 public:
  // pin_dir: load with the maps pinned there (and the host's limits
  // beside it), as an attached interface's are; empty: not pinned.
  // framing: how the device's frames start (enum edgeshed_framing).
  explicit DataplaneFixture(const std::string& pin_dir = "",
                            uint32_t framing = EDGESHED_FRAMING_ETHERNET);

  // Links the tracker and the programs that see requests arrive and get
  // their answer (request accounting, response time). Each failure is a
  // test failure; the links that did attach are returned.
  std::vector<BpfLink> attach_request_tracking() const;
  // Links the request timers of the ports timed at a cgroup
  // (EDGESHED_TIMERS_CGROUP) to the cgroup folder cgroup_fd, the same way.
  std::vector<BpfLink> attach_cgroup_timers(int cgroup_fd) const;

  // Runs the frame once through the entry point.
  RunResult run(Entry entry, const Bytes& frame) const;
  // Same, but nullopt when the kernel's test harness refuses the input
  // (a TC run needs a whole IP header after the link layer).
  std::optional<RunResult> try_run(Entry entry, const Bytes& frame) const;
  // Same, through another program of the data plane, run as entry's hook.
  std::optional<RunResult> try_run_program(const bpf_program* prog, Entry entry,
                                           const Bytes& frame) const;

  // The tracker counts only the connections of the calling thread's network
  // namespace: other tests' servers elsewhere on the host share the classes.
  void count_this_netns_only() const;
  // Enforce, drop, no heartbeat timeout, everything admitted.
  void reset_config() const;
  void set_config(const edgeshed_config& cfg) const;
  // The config as it is, but for its action (enum edgeshed_action).
  void set_action(uint32_t action) const;
  edgeshed_config config() const;
  void set_class_policy(uint32_t class_id, const edgeshed_class_policy& pol,
                        uint32_t salt = 0) const;
  void set_heartbeat(uint64_t ns) const;
  // The class's live counts: requests in service, established connections.
  void set_inflight(uint32_t class_id, uint64_t count) const;
  void set_connections(uint32_t class_id, uint64_t count) const;
  edgeshed_stats stats() const;
  // The port served in several namespaces (EDGESHED_SERVICE_BY_NETNS), and
  // one of them, by its cookie, as `service` with the port's class.
  void serve_in_namespace(uint16_t port, uint32_t class_id, uint64_t netns_cookie,
                          uint32_t service) const;
  // An IPv4 address of this host's, in the namespace of netns_cookie.
  void set_destination_v4(const std::string& address, uint64_t netns_cookie) const;
  // A group's live counts (abi.h): requests in service, connections.
  uint64_t group_inflight(uint32_t group) const;
  uint64_t group_connections(uint32_t group) const;

  const Skeleton& skeleton() const { return *skel_; }
  const Maps& maps() const { return *maps_; }

 private:
  std::optional<Skeleton> skel_;
  std::optional<Maps> maps_;
  mutable edgeshed_policy_set policy_{};
};

// A test's SetUp links the request accounting into links (the tracker and
// the programs that see requests and their answers), or skips the test on a
// kernel without them. The caller returns at once on IsSkipped() or
// HasFatalFailure().
void link_request_tracking(const DataplaneFixture& dp, std::vector<BpfLink>& links);

// Class counters minus an earlier snapshot.
uint64_t class_delta(const edgeshed_stats& after, const edgeshed_stats& before, uint32_t class_id,
                     int counter);
// The same for a class's QUIC row.
uint64_t quic_delta(const edgeshed_stats& after, const edgeshed_stats& before, uint32_t class_id,
                    int counter);
uint64_t global_delta(const edgeshed_stats& after, const edgeshed_stats& before, int counter);
// All class counters of all classes, summed (what a decision touched).
uint64_t all_class_counters(const edgeshed_stats& s);  // both protocols

}  // namespace edgeshed::testing
