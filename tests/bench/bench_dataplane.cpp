// Data plane cost: ns per packet of each path through BPF_PROG_TEST_RUN,
// side by side with a program that returns at once, in one run; then ns per
// event of the tracing programs (in-flight tracker, latency timers) on real
// loopback traffic, from the kernel's own run-time statistics.
// Prints figures; asserts nothing (shared machines are noisy).
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "baseline.skel.h"
#include "baseline_tracing.skel.h"
#include "common/ip_prefix.h"
#include "common/packet.h"
#include "common/test_cgroup.h"
#include "dataplane/destinations.h"
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

struct TracingBaselineDeleter {
  void operator()(baseline_tracing_bpf* s) const { baseline_tracing_bpf__destroy(s); }
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

// Tracing programs on loopback traffic: request/response exchanges on
// keep-alive connections and one-exchange connections.
constexpr int kExchanges = 20000;
constexpr int kConnections = 2000;
constexpr size_t kMessageBytes = 64;

struct LinkDeleter {
  void operator()(bpf_link* l) const { bpf_link__destroy(l); }
};

// Socket fds closed on scope exit.
struct Sock {
  int fd = -1;
  explicit Sock(int f) : fd(f) {}
  Sock(const Sock&) = delete;
  Sock& operator=(const Sock&) = delete;
  ~Sock() {
    if (fd >= 0) close(fd);
  }
};

sockaddr_in loopback_addr(uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

int listen_loopback(uint16_t* port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a = loopback_addr(0);
  socklen_t len = sizeof(a);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&a), len) != 0 || listen(fd, 128) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    std::perror("bench: listen");
    std::exit(1);
  }
  *port = ntohs(a.sin_port);
  return fd;
}

int connect_loopback(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a = loopback_addr(port);
  if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    std::perror("bench: connect");
    std::exit(1);
  }
  return fd;
}

bool exchange_one(int fd, bool send_first) {
  char buf[kMessageBytes] = {};
  auto transfer = [&](bool out) {
    size_t done = 0;
    while (done < kMessageBytes) {
      ssize_t n = out ? send(fd, buf + done, kMessageBytes - done, MSG_NOSIGNAL)
                      : recv(fd, buf + done, kMessageBytes - done, 0);
      if (n <= 0) return false;
      done += static_cast<size_t>(n);
    }
    return true;
  };
  if (send_first) return transfer(true) && transfer(false);
  return transfer(false) && transfer(true);  // answer what arrives
}

// kExchanges on one keep-alive connection, then kConnections with one
// exchange each (the server closes first).
void run_traffic(uint16_t port, int listener, int exchanges, int connections) {
  std::thread server([&] {
    {
      Sock c(accept(listener, nullptr, nullptr));
      for (int i = 0; i < exchanges; ++i) exchange_one(c.fd, false);
    }
    for (int i = 0; i < connections; ++i) {
      Sock c(accept(listener, nullptr, nullptr));
      exchange_one(c.fd, false);
    }
  });
  {
    Sock c(connect_loopback(port));
    for (int i = 0; i < exchanges; ++i) exchange_one(c.fd, true);
  }
  for (int i = 0; i < connections; ++i) {
    Sock c(connect_loopback(port));
    exchange_one(c.fd, true);
  }
  server.join();
}

struct ProgStats {
  uint64_t run_time_ns = 0;
  uint64_t run_cnt = 0;
};

ProgStats prog_stats(const bpf_program* prog) {
  bpf_prog_info info{};
  __u32 len = sizeof(info);
  if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len) != 0) return {};
  return {info.run_time_ns, info.run_cnt};
}

ProgStats operator-(const ProgStats& a, const ProgStats& b) {
  return {a.run_time_ns - b.run_time_ns, a.run_cnt - b.run_cnt};
}

double per_event(const ProgStats& s) {
  return s.run_cnt ? static_cast<double>(s.run_time_ns) / static_cast<double>(s.run_cnt) : 0.0;
}

using Links = std::vector<std::unique_ptr<bpf_link, LinkDeleter>>;

bool attach_all(const std::vector<const bpf_program*>& progs, Links* links) {
  for (const bpf_program* p : progs) {
    links->emplace_back(bpf_program__attach(p));
    if (!links->back()) {
      std::fprintf(stderr, "bench: cannot attach %s\n", bpf_program__name(p));
      return false;
    }
  }
  return true;
}

// Each program's run time and runs over one round of traffic.
std::vector<ProgStats> measure(const std::vector<const bpf_program*>& progs, uint16_t port,
                               int listener) {
  std::vector<ProgStats> before, out;
  for (const bpf_program* p : progs) before.push_back(prog_stats(p));
  run_traffic(port, listener, kExchanges, kConnections);
  for (size_t i = 0; i < progs.size(); ++i) out.push_back(prog_stats(progs[i]) - before[i]);
  return out;
}

// The tracker's three tracing programs, and empty ones on the same
// tracepoints (the reference of both tracing benchmarks); the request
// timers of the ports timed at a cgroup (ingress, egress).
struct TracingPrograms {
  std::vector<const bpf_program*> tracker;
  std::vector<const bpf_program*> empty;
  std::vector<const bpf_program*> cgroup;
};

// Links progs to the cgroup folder cgroup_fd.
bool attach_to_cgroup(const std::vector<const bpf_program*>& progs, int cgroup_fd, Links* links) {
  for (const bpf_program* p : progs) {
    links->emplace_back(bpf_program__attach_cgroup(p, cgroup_fd));
    if (!links->back()) {
      std::fprintf(stderr, "bench: cannot attach %s to a cgroup\n", bpf_program__name(p));
      return false;
    }
  }
  return true;
}

// A cgroup of the benchmark's own, or a message why there is none.
std::optional<edgeshed::testing::TestCgroup> bench_cgroup() {
  std::string why;
  auto cgroup = edgeshed::testing::TestCgroup::create(&why);
  if (!cgroup) std::fprintf(stderr, "bench: %s\n", why.c_str());
  return cgroup;
}

// The tracing programs' ns per event, from the kernel's run-time statistics,
// on the same traffic three times: to a protected port, to an unprotected
// one (every event leaves at the first checks), and with empty programs on
// the same tracepoints. The kernel counts every event of the host (client
// sockets too, which leave early), so the cost per measured sample is the
// difference of the first two runs over the samples.
int bench_tracing(const TracingPrograms& tracing, const edgeshed::Maps& maps) {
  const std::vector<const bpf_program*>& progs = tracing.tracker;
  const std::vector<const bpf_program*>& empty = tracing.empty;
  const std::array<const char*, 3> names = {"in-flight tracker (inet_sock_set_state)",
                                            "request timer (sk_data_ready)",
                                            "response timer (tcp_sendmsg_locked)"};
  uint16_t protected_port, open_port;
  Sock protected_listener(listen_loopback(&protected_port));
  Sock open_listener(listen_loopback(&open_port));
  if (!maps.set_ports({{80, EDGESHED_CLASS_NORMAL}, {protected_port, EDGESHED_CLASS_NORMAL}})) {
    return 1;
  }
  // Statistics are collected while this fd is open.
  Sock stats(bpf_enable_stats(BPF_STATS_RUN_TIME));
  if (stats.fd < 0) {
    std::perror("bench: bpf_enable_stats");
    return 1;
  }
  std::vector<ProgStats> on, off, bare;
  {
    Links links;
    if (!attach_all(empty, &links)) return 1;
    bare = measure(empty, open_port, open_listener.fd);
  }
  {
    Links links;
    if (!attach_all(progs, &links)) return 1;
    on = measure(progs, protected_port, protected_listener.fd);
    off = measure(progs, open_port, open_listener.fd);
  }
  uint64_t responses = 0, closes = 0;
  if (auto latency = maps.read_latency()) {
    for (const auto& p : *latency) {
      if (p.port != protected_port) continue;
      responses = p.measures[EDGESHED_LATENCY_RESPONSE].count;
      closes = p.measures[EDGESHED_LATENCY_CONNECTION].count;
    }
  }

  std::printf("\ntracing programs, ns per event (bpf_prog_info run_time_ns / run_cnt)\n");
  std::printf("traffic per column: %d keep-alive exchanges, then %d one-exchange connections\n\n",
              kExchanges, kConnections);
  std::printf("%-40s %10s %12s %10s %9s\n", "program", "protected", "unprotected", "empty",
              "events");
  for (size_t i = 0; i < names.size(); ++i) {
    std::printf("%-40s %10.1f %12.1f %10.1f %9llu\n", names.at(i), per_event(on[i]),
                per_event(off[i]), per_event(bare[i]),
                static_cast<unsigned long long>(on[i].run_cnt));
  }
  auto added = [&](size_t i) {
    return static_cast<double>(on[i].run_time_ns) - static_cast<double>(off[i].run_time_ns);
  };
  std::printf("\nmeasured %llu responses and %llu server closes on the protected port\n",
              static_cast<unsigned long long>(responses), static_cast<unsigned long long>(closes));
  if (responses) {
    std::printf("added per measured request (request + response timers): %.1f ns\n",
                (added(1) + added(2)) / static_cast<double>(responses));
  }
  if (closes) {
    std::printf("added per protected connection (tracker, open to close): %.1f ns\n",
                added(0) / static_cast<double>(closes));
  }
  return 0;
}

// The protected side with the port timed at its service's cgroup: the
// listener is made inside a cgroup of the benchmark's (the sockets it
// accepts are the cgroup's, the clients' are not), the cgroup_skb timers
// linked there and the tracker at its tracepoint. The timers run for every
// segment of the cgroup's sockets and of no other, so their whole run time
// over the requests measured is the cost a request.
int bench_cgroup_timers(const TracingPrograms& tracing, const edgeshed::Maps& maps) {
  auto cgroup = bench_cgroup();
  if (!cgroup) return 1;
  uint16_t port = 0;
  Sock listener(cgroup->inside([&port] { return listen_loopback(&port); }));
  edgeshed::PortClass timed{port, EDGESHED_CLASS_NORMAL};
  timed.timers = EDGESHED_TIMERS_CGROUP;
  if (!maps.set_ports({{80, EDGESHED_CLASS_NORMAL}, timed})) return 1;
  Sock stats(bpf_enable_stats(BPF_STATS_RUN_TIME));
  if (stats.fd < 0) {
    std::perror("bench: bpf_enable_stats");
    return 1;
  }
  std::vector<const bpf_program*> progs = tracing.cgroup;
  progs.push_back(tracing.tracker[0]);
  std::vector<ProgStats> on;
  {
    Links links;
    if (!attach_to_cgroup(tracing.cgroup, cgroup->fd(), &links) ||
        !attach_all({tracing.tracker[0]}, &links)) {
      return 1;
    }
    on = measure(progs, port, listener.fd);
  }
  uint64_t responses = 0;
  if (auto latency = maps.read_latency()) {
    for (const auto& p : *latency) {
      if (p.port == port) responses = p.measures[EDGESHED_LATENCY_RESPONSE].count;
    }
  }
  std::printf(
      "\nthe port timed at its cgroup (cgroup_skb on the service's cgroup), same traffic\n\n");
  std::printf("%-40s %10s %12s\n", "program", "ns per run", "runs");
  const std::array<const char*, 2> names = {"request timer (cgroup_skb ingress)",
                                            "response timer (cgroup_skb egress)"};
  for (size_t i = 0; i < names.size(); ++i) {
    std::printf("%-40s %10.1f %12llu\n", names.at(i), per_event(on[i]),
                static_cast<unsigned long long>(on[i].run_cnt));
  }
  if (!responses) {
    std::fprintf(stderr, "bench: the cgroup timers measured no response\n");
    return 1;
  }
  std::printf("\nmeasured %llu responses on the port timed at its cgroup\n",
              static_cast<unsigned long long>(responses));
  std::printf(
      "per measured request (cgroup timers, every run): %.1f ns\n",
      static_cast<double>(on[0].run_time_ns + on[1].run_time_ns) / static_cast<double>(responses));
  return 0;
}

// One thread's request/response exchanges on one loopback connection: the
// data is delivered within each send, so nothing blocks and no thread
// wakes, and an exchange is four syscalls and the stack's work.
double ns_per_exchange(int client, int server, int exchanges) {
  char buf[kMessageBytes] = {};
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < exchanges; ++i) {
    if (send(client, buf, sizeof(buf), MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof(buf)) ||
        recv(server, buf, sizeof(buf), MSG_WAITALL) != static_cast<ssize_t>(sizeof(buf)) ||
        send(server, buf, sizeof(buf), MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof(buf)) ||
        recv(client, buf, sizeof(buf), MSG_WAITALL) != static_cast<ssize_t>(sizeof(buf))) {
      std::perror("bench: exchange");
      std::exit(1);
    }
  }
  const std::chrono::duration<double, std::nano> took = std::chrono::steady_clock::now() - start;
  return took.count() / exchanges;
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(std::lround(q * static_cast<double>(v.size() - 1)))];
}

// What a socket of a port nobody protects pays for the tracker, with the
// run-time statistics off (their clock reads are most of a small program's
// figure above): exchanges on an unprotected loopback connection with
// nothing attached, with the tracker's programs, and with empty programs on
// the same tracepoints, in turn over many short rounds, so that the host's
// drift shifts the three alike. Each round's difference to its own bare
// run is divided by the tracepoint events of an exchange (counted in a
// round of their own, statistics on).
int bench_unprotected(const TracingPrograms& tracing) {
  constexpr int kCostRounds = 41;
  constexpr int kCostExchanges = 20000;
  constexpr int kWarmExchanges = 2000;
  const std::vector<const bpf_program*>& tracker = tracing.tracker;
  const std::vector<const bpf_program*>& empty = tracing.empty;
  uint16_t port = 0;
  Sock listener(listen_loopback(&port));
  Sock client(connect_loopback(port));
  Sock server(accept(listener.fd, nullptr, nullptr));
  if (server.fd < 0) {
    std::perror("bench: accept");
    return 1;
  }
  double events_per_exchange = 0;
  {
    Sock stats(bpf_enable_stats(BPF_STATS_RUN_TIME));
    Links links;
    if (stats.fd < 0 || !attach_all(tracker, &links)) return 1;
    std::vector<ProgStats> before;
    before.reserve(tracker.size());
    for (const bpf_program* p : tracker) before.push_back(prog_stats(p));
    ns_per_exchange(client.fd, server.fd, kCostExchanges);
    for (size_t i = 0; i < tracker.size(); ++i) {
      events_per_exchange += static_cast<double>((prog_stats(tracker[i]) - before[i]).run_cnt);
    }
    events_per_exchange /= kCostExchanges;
  }
  if (events_per_exchange <= 0) {
    std::fprintf(stderr, "bench: the tracker saw no event of the exchanges\n");
    return 1;
  }
  // Every port timed at its cgroup: the tracker's state-change program
  // stays on every socket, the timers are linked to a cgroup this socket
  // is not in, and the tracepoint timers are not linked.
  auto cgroup = bench_cgroup();
  if (!cgroup) return 1;
  std::vector<double> bare, with_tracker, with_empty, with_cgroup, tracker_added, empty_added,
      cgroup_added;
  for (int r = 0; r < kCostRounds; ++r) {
    const auto timed = [&](const std::vector<const bpf_program*>& progs, bool cgroup_timers) {
      Links links;
      if (!attach_all(progs, &links)) std::exit(1);
      if (cgroup_timers && !attach_to_cgroup(tracing.cgroup, cgroup->fd(), &links)) std::exit(1);
      ns_per_exchange(client.fd, server.fd, kWarmExchanges);
      return ns_per_exchange(client.fd, server.fd, kCostExchanges);
    };
    // The order turns each round: none of the four is always first.
    double t[4] = {};
    for (int k = 0; k < 4; ++k) {
      const int which = (r + k) % 4;
      switch (which) {
        case 0:
          t[0] = timed({}, false);
          break;
        case 1:
          t[1] = timed(tracker, false);
          break;
        case 2:
          t[2] = timed(empty, false);
          break;
        default:
          t[3] = timed({tracker[0]}, true);
          break;
      }
    }
    bare.push_back(t[0]);
    with_tracker.push_back(t[1]);
    with_empty.push_back(t[2]);
    with_cgroup.push_back(t[3]);
    tracker_added.push_back((t[1] - t[0]) / events_per_exchange);
    empty_added.push_back((t[2] - t[0]) / events_per_exchange);
    cgroup_added.push_back((t[3] - t[0]) / events_per_exchange);
  }
  std::printf(
      "\nan unprotected socket's cost, statistics off: %d rounds of %d exchanges of %zu "
      "bytes\non one loopback connection, one thread; %.2f tracepoint events an exchange\n\n",
      kCostRounds, kCostExchanges, kMessageBytes, events_per_exchange);
  std::printf("%-40s %10s\n", "attached", "ns/exchange");
  std::printf("%-40s %10.0f\n", "nothing", median(bare));
  std::printf("%-40s %10.0f\n", "the tracker (port unprotected)", median(with_tracker));
  std::printf("%-40s %10.0f\n", "empty programs", median(with_empty));
  std::printf("%-40s %10.0f\n", "the tracker, ports timed at a cgroup", median(with_cgroup));
  std::printf("\nadded per send or receive, to the same round's bare run: median (quartiles)\n");
  std::printf("unprotected socket, the tracker: %.1f ns (%.1f to %.1f)\n", median(tracker_added),
              quantile(tracker_added, 0.25), quantile(tracker_added, 0.75));
  std::printf("unprotected socket, empty programs: %.1f ns (%.1f to %.1f)\n", median(empty_added),
              quantile(empty_added, 0.25), quantile(empty_added, 0.75));
  std::printf("unprotected socket, ports timed at a cgroup: %.1f ns (%.1f to %.1f)\n",
              median(cgroup_added), quantile(cgroup_added, 0.25), quantile(cgroup_added, 0.75));
  return 0;
}

struct Case {
  std::string name;
  Bytes frame;
  edgeshed_class_policy policy;
  uint32_t action;
  bool rewrites;
  // Off (all zero) but in its own row: a RST under the reflection limit
  // pays for a lookup in its LRU and two atomics.
  edgeshed_rst_reflect reflect{};
  // Only the host's destinations decided: a lookup in the LPM trie of the
  // host's local routes (dataplane/destinations.h).
  bool destinations = false;
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
  if (!maps.set_ports({{80, EDGESHED_CLASS_NORMAL, EDGESHED_PORT_TCP | EDGESHED_PORT_QUIC}}))
    return 1;

  TcpSpec data;
  data.flags = edgeshed::testing::kAck | edgeshed::testing::kPsh;
  data.seq = 1000;
  data.ack = 2000;
  data.payload = Bytes(64, 'd');
  const Bytes established = PacketBuilder().ipv4("192.0.2.1", "198.51.100.2").tcp(data).build();
  const Bytes syn = PacketBuilder::syn_v4(40000, 80).build();
  const Bytes syn_unprotected = PacketBuilder::syn_v4(40000, 22).build();
  const Bytes syn_transit = PacketBuilder::syn_v4(40000, 80, "192.0.2.1", "203.0.113.9").build();
  // A host's local table: loopback's, a few addresses and one AnyIP route.
  auto tries = edgeshed::DestinationMaps::from_skeleton(*skel).value();
  std::vector<edgeshed::Destination> local;
  for (const char* p : {"127.0.0.0/8", "127.0.0.1/32", "198.51.100.2/32", "198.51.100.3/32",
                        "192.0.2.0/24", "10.1.2.3/32", "2001:db8::2/128", "::1/128"}) {
    local.push_back({edgeshed::parse_ip_prefix(p).value(), EDGESHED_DST_LOCAL});
  }
  if (!tries.replace(local)) return 1;
  const Bytes quic_initial = PacketBuilder()
                                 .ipv4("192.0.2.1", "198.51.100.2")
                                 .udp(50000, 80, edgeshed::testing::quic_long_packet({}))
                                 .build();
  const Bytes quic_short = PacketBuilder()
                               .ipv4("192.0.2.1", "198.51.100.2")
                               .udp(50000, 80, edgeshed::testing::quic_short_packet(1200))
                               .build();
  constexpr uint32_t kAll = EDGESHED_FRAC_ONE;
  const edgeshed_class_policy admit_all{};
  // Every check evaluated, none sheds: the longest admitting path.
  const edgeshed_class_policy full{1, 1000000, 4000000000u, 4000000000u, 0, 0};
  const edgeshed_class_policy shed_all{kAll, 0, 0, 0, 0, 0};

  const std::vector<Case> cases = {
      {"established flow (ACK + 64 B data)", established, shed_all, EDGESHED_ACTION_DROP, false},
      {"SYN to an unprotected port", syn_unprotected, shed_all, EDGESHED_ACTION_DROP, false},
      {"SYN admitted (no limits set)", syn, admit_all, EDGESHED_ACTION_DROP, false},
      {"SYN admitted (cap, fraction, bucket)", syn, full, EDGESHED_ACTION_DROP, false},
      {"SYN shed: drop", syn, shed_all, EDGESHED_ACTION_DROP, false},
      {"SYN shed: drop, destination checked", syn, shed_all, EDGESHED_ACTION_DROP, false, {}, true},
      {"SYN to another host (transit)",
       syn_transit,
       shed_all,
       EDGESHED_ACTION_DROP,
       false,
       {},
       true},
      {"SYN shed: RST reply (repeat 1)", syn, shed_all, EDGESHED_ACTION_RST, true},
      // A rate no run reaches, so every SYN is answered and the row is the
      // RST path plus the limit's bookkeeping.
      {"SYN shed: RST, reflection limit (rep. 1)",
       syn,
       shed_all,
       EDGESHED_ACTION_RST,
       true,
       {10'000'000, 10'000'000, 24, 48, {}}},
      {"QUIC 1-RTT packet (open connection)", quic_short, shed_all, EDGESHED_ACTION_DROP, false},
      {"QUIC Initial admitted (fraction, bucket)", quic_initial, full, EDGESHED_ACTION_DROP, false},
      {"QUIC Initial shed: drop", quic_initial, shed_all, EDGESHED_ACTION_DROP, false},
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
    cfg.rst_reflect = c.reflect;
    if (c.destinations) cfg.flags |= EDGESHED_CFG_F_DESTINATIONS;
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
  // Its traffic runs a server thread: std::thread may throw.
  std::unique_ptr<baseline_tracing_bpf, TracingBaselineDeleter> tracing_base(
      baseline_tracing_bpf__open_and_load());
  if (!tracing_base) {
    std::fprintf(stderr, "bench: cannot load the tracing baseline programs\n");
    return 1;
  }
  const TracingPrograms tracing = {
      {(*skel)->progs.edgeshed_track, (*skel)->progs.edgeshed_request,
       (*skel)->progs.edgeshed_response},
      {tracing_base->progs.baseline_set_state, tracing_base->progs.baseline_data_ready,
       tracing_base->progs.baseline_sendmsg},
      {(*skel)->progs.edgeshed_request_cg, (*skel)->progs.edgeshed_response_cg}};
  try {
    if (int rc = bench_tracing(tracing, maps); rc != 0) return rc;
    if (int rc = bench_cgroup_timers(tracing, maps); rc != 0) return rc;
    return bench_unprotected(tracing);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench: tracing programs: %s\n", e.what());
    return 1;
  }
}
