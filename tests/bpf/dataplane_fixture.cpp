#include "bpf/dataplane_fixture.h"

#include <arpa/inet.h>
#include <sys/stat.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <thread>

#include "edgeshed.skel.h"

namespace edgeshed::testing {
namespace {

constexpr uint32_t kTcActUnspec = 0xffffffffu;  // TC_ACT_UNSPEC (-1)
constexpr uint32_t kTcActShot = 2;
constexpr uint32_t kTcActRedirect = 7;
constexpr size_t kMaxFrame = 2048;

Verdict verdict_of(Entry entry, uint32_t retval) {
  if (entry == Entry::kXdp) {
    switch (retval) {
      case XDP_PASS:
        return Verdict::kPass;
      case XDP_DROP:
        return Verdict::kDrop;
      case XDP_TX:
        return Verdict::kTx;
      default:
        return Verdict::kOther;
    }
  }
  switch (retval) {
    case kTcActUnspec:
      return Verdict::kPass;
    case kTcActShot:
      return Verdict::kDrop;
    case kTcActRedirect:
      return Verdict::kTx;
    default:
      return Verdict::kOther;
  }
}

// Per-CPU state (counters, RST budget) must stay on one CPU across runs.
void pin_to_first_cpu() {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(0, &set);
  sched_setaffinity(0, sizeof(set), &set);
}

}  // namespace

std::string entry_name(const ::testing::TestParamInfo<Entry>& info) {
  return info.param == Entry::kXdp ? "xdp" : "tc";
}

DataplaneFixture::DataplaneFixture(const std::string& pin_dir, uint32_t framing) {
  pin_to_first_cpu();
  auto skel = Skeleton::load(pin_dir, framing);
  if (!skel) {
    ADD_FAILURE() << skel.error().message;
    return;
  }
  skel_.emplace(std::move(*skel));
  auto maps = Maps::from_skeleton(*skel_);
  if (!maps) {
    ADD_FAILURE() << maps.error().message;
    return;
  }
  maps_.emplace(std::move(*maps));
  reset_config();
  EXPECT_TRUE(maps_->set_ports({{kNormalPort, EDGESHED_CLASS_NORMAL},
                                {kCriticalPort, EDGESHED_CLASS_CRITICAL},
                                {kBackgroundPort, EDGESHED_CLASS_BACKGROUND}}));
}

void DataplaneFixture::count_this_netns_only() const {
  struct stat ns {};
  ASSERT_EQ(stat("/proc/thread-self/ns/net", &ns), 0);
  auto cfg = config();
  cfg.netns_ino = static_cast<uint32_t>(ns.st_ino);
  set_config(cfg);
}

void DataplaneFixture::reset_config() const {
  edgeshed_config cfg{};
  cfg.abi_version = EDGESHED_ABI_VERSION;
  cfg.mode = EDGESHED_MODE_ENFORCE;
  cfg.action = EDGESHED_ACTION_DROP;
  cfg.draw = EDGESHED_DRAW_SOURCE_HASH;
  cfg.hook = EDGESHED_HOOK_XDP;
  cfg.rst_per_sec_per_cpu = 1000;
  cfg.heartbeat_timeout_ns = 0;
  std::copy(kDefaultDstMac.begin(), kDefaultDstMac.end(), cfg.if_mac);
  set_config(cfg);
  policy_ = {};
  ASSERT_TRUE(maps_->publish(policy_, monotonic_ns(), 0));
}

void DataplaneFixture::set_config(const edgeshed_config& cfg) const {
  ASSERT_TRUE(maps_->write_config(cfg));
}

void DataplaneFixture::set_action(uint32_t action) const {
  auto cfg = config();
  cfg.action = action;
  set_config(cfg);
}

edgeshed_config DataplaneFixture::config() const { return maps_->read_config().value(); }

void DataplaneFixture::set_class_policy(uint32_t class_id, const edgeshed_class_policy& pol,
                                        uint32_t salt) const {
  policy_.cls[class_id] = pol;
  ASSERT_TRUE(maps_->publish(policy_, monotonic_ns(), salt));
}

void DataplaneFixture::set_heartbeat(uint64_t ns) const {
  auto ctl = maps_->read_control().value();
  ASSERT_TRUE(maps_->publish(policy_, ns, ctl.salt));
}

std::vector<BpfLink> DataplaneFixture::attach_request_tracking() const {
  std::vector<BpfLink> links;
  const auto* progs = &(*skel_)->progs;
  for (bpf_program* p :
       {progs->edgeshed_track, progs->edgeshed_request, progs->edgeshed_response}) {
    BpfLink link(bpf_program__attach(p));
    EXPECT_TRUE(link) << bpf_program__name(p) << ": attach failed, errno " << errno;
    if (link) links.push_back(std::move(link));
  }
  return links;
}

std::vector<BpfLink> DataplaneFixture::attach_cgroup_timers(int cgroup_fd) const {
  std::vector<BpfLink> links;
  const auto* progs = &(*skel_)->progs;
  for (bpf_program* p : {progs->edgeshed_request_cg, progs->edgeshed_response_cg}) {
    BpfLink link(bpf_program__attach_cgroup(p, cgroup_fd));
    EXPECT_TRUE(link) << bpf_program__name(p) << ": attach failed, errno " << errno;
    if (link) links.push_back(std::move(link));
  }
  return links;
}

void link_request_tracking(const DataplaneFixture& dp, std::vector<BpfLink>& links) {
  if (!dp.skeleton().measures_response()) {
    GTEST_SKIP() << "this kernel lacks tp_btf/sk_data_ready (6.6) or tcp_sendmsg_locked (6.11)";
  }
  links = dp.attach_request_tracking();
  ASSERT_EQ(links.size(), 3u);
}

void DataplaneFixture::set_inflight(uint32_t class_id, uint64_t count) const {
  int fd = bpf_map__fd(skel_->get()->maps.es_inflight_cls);
  ASSERT_EQ(bpf_map_update_elem(fd, &class_id, &count, BPF_ANY), 0);
}

void DataplaneFixture::set_connections(uint32_t class_id, uint64_t count) const {
  int fd = bpf_map__fd(skel_->get()->maps.es_conns_cls);
  ASSERT_EQ(bpf_map_update_elem(fd, &class_id, &count, BPF_ANY), 0);
}

void DataplaneFixture::serve_in_namespace(uint16_t port, uint32_t class_id, uint64_t netns_cookie,
                                          uint32_t service) const {
  edgeshed_port entry{};
  entry.protocols = EDGESHED_PORT_TCP;
  entry.class_id = static_cast<__u8>(class_id);
  entry.latency_slot = EDGESHED_LATENCY_NO_SLOT;
  entry.netns_id = -1;
  entry.service = EDGESHED_SERVICE_BY_NETNS;
  uint32_t key = port;
  ASSERT_EQ(bpf_map_update_elem(bpf_map__fd(skel_->get()->maps.es_ports), &key, &entry, BPF_ANY),
            0);
  edgeshed_service_key service_key{};
  service_key.netns_cookie = netns_cookie;
  service_key.port = port;
  entry.service = static_cast<__u8>(service);
  ASSERT_EQ(bpf_map_update_elem(bpf_map__fd(skel_->get()->maps.es_services), &service_key, &entry,
                                BPF_ANY),
            0);
}

void DataplaneFixture::set_destination_v4(const std::string& address, uint64_t netns_cookie) const {
  edgeshed_lpm_v4 key{};
  key.prefixlen = 32;
  ASSERT_EQ(inet_pton(AF_INET, address.c_str(), key.addr), 1) << address;
  edgeshed_dst_value value{};
  value.kind = EDGESHED_DST_LOCAL;
  value.netns_cookie = netns_cookie;
  ASSERT_EQ(bpf_map_update_elem(bpf_map__fd(skel_->get()->maps.es_dst4), &key, &value, BPF_ANY), 0);
}

namespace {
uint64_t read_group(const bpf_map* map, uint32_t group) {
  uint64_t v = 0;
  EXPECT_EQ(bpf_map_lookup_elem(bpf_map__fd(map), &group, &v), 0) << "group " << group;
  return v;
}
}  // namespace

uint64_t DataplaneFixture::group_inflight(uint32_t group) const {
  return read_group(skel_->get()->maps.es_inflight_cls, group);
}

uint64_t DataplaneFixture::group_connections(uint32_t group) const {
  return read_group(skel_->get()->maps.es_conns_cls, group);
}

edgeshed_stats DataplaneFixture::stats() const { return maps_->read_stats().value(); }

RunResult DataplaneFixture::run(Entry entry, const Bytes& frame) const {
  auto r = try_run(entry, frame);
  EXPECT_TRUE(r.has_value()) << "test run failed: errno " << errno;
  return r.value_or(RunResult{Verdict::kOther, 0, {}});
}

std::optional<RunResult> DataplaneFixture::try_run(Entry entry, const Bytes& frame) const {
  return try_run_program(
      entry == Entry::kXdp ? skel_->get()->progs.edgeshed_xdp : skel_->get()->progs.edgeshed_tc,
      entry, frame);
}

std::optional<RunResult> DataplaneFixture::try_run_program(const bpf_program* prog, Entry entry,
                                                           const Bytes& frame) const {
  // The output is never longer than the frame (a RST is shorter than its
  // SYN); a run whose buffer is shorter than its output fails (ENOSPC).
  RunResult r{Verdict::kOther, 0, Bytes(std::max(kMaxFrame, frame.size()))};
  bpf_test_run_opts o{};
  o.sz = sizeof(o);
  o.data_in = frame.data();
  o.data_size_in = static_cast<__u32>(frame.size());
  o.data_out = r.out.data();
  o.data_size_out = static_cast<__u32>(r.out.size());
  o.repeat = 1;
  if (bpf_prog_test_run_opts(bpf_program__fd(prog), &o) != 0) return std::nullopt;
  r.out.resize(o.data_size_out);
  r.retval = o.retval;
  r.verdict = verdict_of(entry, o.retval);
  return r;
}

uint64_t class_delta(const edgeshed_stats& after, const edgeshed_stats& before, uint32_t class_id,
                     int counter) {
  return after.cls[class_id][counter] - before.cls[class_id][counter];
}

uint64_t quic_delta(const edgeshed_stats& after, const edgeshed_stats& before, uint32_t class_id,
                    int counter) {
  return after.quic_cls[class_id][counter] - before.quic_cls[class_id][counter];
}

uint64_t global_delta(const edgeshed_stats& after, const edgeshed_stats& before, int counter) {
  return after.global[counter] - before.global[counter];
}

uint64_t all_class_counters(const edgeshed_stats& s) {
  uint64_t sum = 0;
  // cppcheck-suppress constVariable ; row is a reference to a const array already
  for (const auto& row : s.cls)
    for (uint64_t v : row) sum += v;
  // cppcheck-suppress constVariable ; row is a reference to a const array already
  for (const auto& row : s.quic_cls)
    for (uint64_t v : row) sum += v;
  return sum;
}

FloodResult flood_two_cpus(const DataplaneFixture& dp, Entry entry, const Bytes& frame,
                           Verdict verdict, std::chrono::milliseconds duration,
                           uint64_t max_per_cpu) {
  std::atomic<uint64_t> counted{0}, sent{0};
  const auto start = std::chrono::steady_clock::now();
  auto flood = [&](int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
    uint64_t mine = 0, n = 0;
    while (std::chrono::steady_clock::now() - start < duration && n < max_per_cpu) {
      mine += dp.run(entry, frame).verdict == verdict;
      ++n;
    }
    counted += mine;
    sent += n;
  };
  std::thread a(flood, 0), b(flood, 1);
  a.join();
  b.join();
  return {sent.load(), counted.load(),
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()};
}

void expect_shared_rate(const FloodResult& flood, uint32_t rate, uint32_t burst, const char* what) {
  const double most = burst + rate * (flood.seconds + kJiffyS) + 2;
  std::printf("2 CPUs, %llu SYNs in %.3f s: %llu %s, at most %.0f\n",
              static_cast<unsigned long long>(flood.sent), flood.seconds,
              static_cast<unsigned long long>(flood.counted), what, most);
  ASSERT_GT(flood.sent, 10u * (burst + rate * flood.seconds))
      << "no flood: the limit was never tested";
  EXPECT_LE(static_cast<double>(flood.counted), most);
  EXPECT_GE(static_cast<double>(flood.counted), burst + 0.5 * rate * flood.seconds);
}

}  // namespace edgeshed::testing
