// Data plane cost: ns per packet of each path through BPF_PROG_TEST_RUN,
// side by side with a program that returns at once, in one run.
// Prints figures; asserts nothing (shared machines are noisy).
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "baseline.skel.h"
#include "common/packet.h"
#include "dataplane/maps.h"
#include "dataplane/skeleton.h"
#include "edgeshed.skel.h"

namespace {

using edgeshed::testing::Bytes;
using edgeshed::testing::PacketBuilder;
using edgeshed::testing::TcpSpec;

constexpr uint32_t kRepeat = 2000000;
constexpr int kRewriteRuns = 20000;  // RST path: repeat 1, summed
constexpr int kRounds = 5;           // median of these

struct BaselineDeleter {
  void operator()(baseline_bpf* s) const { baseline_bpf__destroy(s); }
};

// Mean ns per run as the kernel measured it.
double time_prog(int prog_fd, const Bytes& frame, uint32_t repeat) {
  Bytes out(2048);
  bpf_test_run_opts o{};
  o.sz = sizeof(o);
  o.data_in = frame.data();
  o.data_size_in = static_cast<uint32_t>(frame.size());
  o.data_out = out.data();
  o.data_size_out = static_cast<uint32_t>(out.size());
  o.repeat = repeat;
  if (bpf_prog_test_run_opts(prog_fd, &o) != 0) {
    std::perror("bpf_prog_test_run_opts");
    std::exit(1);
  }
  return static_cast<double>(o.duration);
}

// A program that rewrites its packet must see the original every time.
double time_rewriting(int prog_fd, const Bytes& frame) {
  double total = 0;
  for (int i = 0; i < kRewriteRuns; ++i) total += time_prog(prog_fd, frame, 1);
  return total / kRewriteRuns;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Case {
  std::string name;
  Bytes frame;
  edgeshed_class_policy policy;
  uint32_t action;
  bool rewrites;
};

}  // namespace

int main() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  CPU_SET(0, &cpus);
  sched_setaffinity(0, sizeof(cpus), &cpus);

  auto skel = edgeshed::Skeleton::load();
  if (!skel) {
    std::fprintf(stderr, "bench: %s\n", skel.error().message.c_str());
    return 1;
  }
  std::unique_ptr<baseline_bpf, BaselineDeleter> base(baseline_bpf__open_and_load());
  if (!base) {
    std::fprintf(stderr, "bench: cannot load the baseline program\n");
    return 1;
  }
  auto maps = edgeshed::Maps::from_skeleton(*skel).value();
  if (!maps.set_ports({{80, EDGESHED_CLASS_NORMAL}})) return 1;

  TcpSpec data;
  data.flags = edgeshed::testing::kAck | edgeshed::testing::kPsh;
  data.seq = 1000;
  data.ack = 2000;
  data.payload = Bytes(64, 'd');
  const Bytes established = PacketBuilder().ipv4("192.0.2.1", "198.51.100.2").tcp(data).build();
  const Bytes syn = PacketBuilder::syn_v4(40000, 80).build();
  const Bytes syn_unprotected = PacketBuilder::syn_v4(40000, 22).build();
  constexpr uint32_t kAll = EDGESHED_FRAC_ONE;
  const edgeshed_class_policy admit_all{};
  // Every check evaluated, none sheds: the longest admitting path.
  const edgeshed_class_policy full{1, 1000000, 4000000000u, 4000000000u};
  const edgeshed_class_policy shed_all{kAll, 0, 0, 0};

  const std::vector<Case> cases = {
      {"established flow (ACK + 64 B data)", established, shed_all, EDGESHED_ACTION_DROP, false},
      {"SYN to an unprotected port", syn_unprotected, shed_all, EDGESHED_ACTION_DROP, false},
      {"SYN admitted (no limits set)", syn, admit_all, EDGESHED_ACTION_DROP, false},
      {"SYN admitted (cap, fraction, bucket)", syn, full, EDGESHED_ACTION_DROP, false},
      {"SYN shed: drop", syn, shed_all, EDGESHED_ACTION_DROP, false},
      {"SYN shed: RST reply (repeat 1)", syn, shed_all, EDGESHED_ACTION_RST, true},
  };

  struct Hook {
    int prog_fd;
    int baseline_fd;
  };
  // In the order of the table's columns.
  const Hook hooks[] = {
      {bpf_program__fd((*skel)->progs.edgeshed_xdp), bpf_program__fd(base->progs.baseline_xdp)},
      {bpf_program__fd((*skel)->progs.edgeshed_tc), bpf_program__fd(base->progs.baseline_tc)},
  };

  std::printf("edgeshed data plane cost, BPF_PROG_TEST_RUN, repeat %u, median of %d rounds\n",
              kRepeat, kRounds);
  std::printf("(RST path: repeat 1 x %d, since a repeated run would see its own rewrite)\n\n",
              kRewriteRuns);
  std::printf("%-40s %10s %8s %10s %8s\n", "path", "xdp ns", "x base", "tc ns", "x base");

  std::vector<double> base_ns(2), base_single_ns(2);
  for (int h = 0; h < 2; ++h) {
    std::vector<double> r, r1;
    for (int i = 0; i < kRounds; ++i) {
      r.push_back(time_prog(hooks[h].baseline_fd, established, kRepeat));
      r1.push_back(time_rewriting(hooks[h].baseline_fd, established));
    }
    base_ns[h] = median(r);
    base_single_ns[h] = median(r1);
  }
  std::printf("%-40s %10.0f %8.2f %10.0f %8.2f\n", "baseline: return at once", base_ns[0], 1.0,
              base_ns[1], 1.0);
  std::printf("%-40s %10.0f %8.2f %10.0f %8.2f\n", "baseline, repeat 1", base_single_ns[0], 1.0,
              base_single_ns[1], 1.0);

  for (const auto& c : cases) {
    edgeshed_config cfg{};
    cfg.abi_version = EDGESHED_ABI_VERSION;
    cfg.mode = EDGESHED_MODE_ENFORCE;
    cfg.action = c.action;
    cfg.rst_per_sec_per_cpu = 0xffffffffu;
    if (!maps.write_config(cfg)) return 1;
    edgeshed_policy_set set{};
    set.cls[EDGESHED_CLASS_NORMAL] = c.policy;
    if (!maps.publish(set, edgeshed::monotonic_ns(), 7)) return 1;

    double ns[2];
    for (int h = 0; h < 2; ++h) {
      std::vector<double> r;
      r.reserve(kRounds);
      for (int i = 0; i < kRounds; ++i) {
        r.push_back(c.rewrites ? time_rewriting(hooks[h].prog_fd, c.frame)
                               : time_prog(hooks[h].prog_fd, c.frame, kRepeat));
      }
      ns[h] = median(r);
    }
    const auto& b = c.rewrites ? base_single_ns : base_ns;
    std::printf("%-40s %10.0f %8.2f %10.0f %8.2f\n", c.name.c_str(), ns[0], ns[0] / b[0], ns[1],
                ns[1] / b[1]);
  }
  std::printf(
      "\nratios: to the baseline of the same hook and repeat mode; the kernel reports whole ns\n");
  return 0;
}
