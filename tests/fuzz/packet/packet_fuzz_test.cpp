// The packet fuzzer: random and mutated frames through both entry points
// (BPF_PROG_TEST_RUN of edgeshed_xdp and edgeshed_tc), each judged by an
// independent oracle (frame_oracle.h). On every frame:
//  - what is not a well-formed new connection to a protected port passes,
//    untouched: never dropped, never answered with a RST;
//  - a new connection to a protected port gets exactly the verdict the
//    phase's policy gives its class, and a RST is a correct refusal of it;
//  - the counters move by exactly what the oracle says (one counter, or a
//    shed and its RST), and by nothing else;
//  - the same frame run again gives the same verdict, bytes and counters
//    (every policy here is deterministic), xdp and tc agree, and one source
//    is always shed or always admitted by the source-hash draw.
//
// EDGESHED_FUZZ_FRAMES (frames per phase, default 150000),
// EDGESHED_FUZZ_SECONDS (a time bound per phase, default none) and
// EDGESHED_FUZZ_SEED (default 1; "time" for a new one each run) control a
// run. Failing frames are printed in hex and written to
// packet_fuzz_failures.<test>.txt in the working directory.
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>

#include "bpf/dataplane_fixture.h"
#include "common/ip_prefix.h"
#include "common/names.h"
#include "fuzz/packet/frame_gen.h"
#include "fuzz/packet/frame_oracle.h"

namespace edgeshed::testing {
namespace {

constexpr size_t kClasses = EDGESHED_NUM_CLASSES;
constexpr size_t kClassCounters = EDGESHED_NUM_COUNTERS;
// TCP's class rows, the global counters, then QUIC's class rows.
constexpr size_t kNumCounters = 2 * kClasses * kClassCounters + EDGESHED_NUM_GLOBAL_COUNTERS;
using Counters = std::array<int64_t, kNumCounters>;

constexpr size_t cls_index(uint32_t class_id, int counter) {
  return class_id * kClassCounters + static_cast<size_t>(counter);
}
constexpr size_t global_index(int counter) {
  return kClasses * kClassCounters + static_cast<size_t>(counter);
}
constexpr size_t quic_index(uint32_t class_id, int counter) {
  return global_index(EDGESHED_NUM_GLOBAL_COUNTERS) + cls_index(class_id, counter);
}

Counters flatten(const edgeshed_stats& s) {
  Counters c{};
  for (uint32_t k = 0; k < EDGESHED_NUM_CLASSES; ++k) {
    for (int n = 0; n < EDGESHED_NUM_COUNTERS; ++n) {
      c[cls_index(k, n)] = static_cast<int64_t>(s.cls[k][n]);
      c[quic_index(k, n)] = static_cast<int64_t>(s.quic_cls[k][n]);
    }
  }
  for (int g = 0; g < EDGESHED_NUM_GLOBAL_COUNTERS; ++g)
    c[global_index(g)] = static_cast<int64_t>(s.global[g]);
  return c;
}

Counters operator-(const Counters& a, const Counters& b) {
  Counters d{};
  for (size_t i = 0; i < kNumCounters; ++i) d[i] = a[i] - b[i];
  return d;
}

std::string counter_name(size_t i) {
  const auto& ctr = names::kCounters;
  const auto& cls = names::kClasses;
  if (i < kClasses * kClassCounters) {
    return std::string(cls[i / kClassCounters]) + "." + std::string(ctr[i % kClassCounters]);
  }
  if (i >= quic_index(0, 0)) {
    const size_t q = i - quic_index(0, 0);
    return "quic." + std::string(cls[q / kClassCounters]) + "." +
           std::string(ctr[q % kClassCounters]);
  }
  return std::string(names::kGlobalCounters[i - kClasses * kClassCounters]);
}

std::string describe(const Counters& d) {
  std::string out;
  for (size_t i = 0; i < kNumCounters; ++i) {
    if (d[i] == 0) continue;
    out +=
        (out.empty() ? "" : " ") + counter_name(i) + (d[i] > 0 ? "+" : "") + std::to_string(d[i]);
  }
  return out.empty() ? "none" : out;
}

std::string hex(const Bytes& b) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  for (uint8_t x : b) s += {kDigits[x >> 4], kDigits[x & 15]};
  return s;
}

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kPass:
      return "pass";
    case Verdict::kDrop:
      return "drop";
    case Verdict::kTx:
      return "rst";
    default:
      return "other";
  }
}

uint64_t env_u64(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  if (std::strcmp(v, "time") == 0) {
    return static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  }
  return std::strtoull(v, nullptr, 0);
}

// One configuration of the data plane for a whole run. Every one is
// deterministic: source-hash draw with a fixed salt, no token bucket, an
// in-flight count set by the test, a heartbeat either fresh forever
// (timeout 0) or stale forever (written as 0).
struct Phase {
  const char* name;
  uint32_t mode;
  uint32_t action;
  uint32_t rst_budget;
  bool stale_heartbeat;
};

constexpr Phase kPhases[] = {
    {"enforce_rst", EDGESHED_MODE_ENFORCE, EDGESHED_ACTION_RST, UINT32_MAX, false},
    {"enforce_rst_budget_spent", EDGESHED_MODE_ENFORCE, EDGESHED_ACTION_RST, 0, false},
    {"enforce_drop", EDGESHED_MODE_ENFORCE, EDGESHED_ACTION_DROP, UINT32_MAX, false},
    {"observe", EDGESHED_MODE_OBSERVE, EDGESHED_ACTION_RST, UINT32_MAX, false},
    {"off", EDGESHED_MODE_OFF, EDGESHED_ACTION_RST, UINT32_MAX, false},
    {"fail_open", EDGESHED_MODE_ENFORCE, EDGESHED_ACTION_RST, UINT32_MAX, true},
};

std::string phase_name(const ::testing::TestParamInfo<Phase>& info) { return info.param.name; }
// The parameter as gtest prints it, which ctest's test names carry: the
// name, not the bytes of a struct holding a pointer.
void PrintTo(const Phase& phase, std::ostream* os) { *os << phase.name; }

// The policy of every phase: critical admitted, normal shed by half on the
// source hash, background at its in-flight cap (1 of 1).
constexpr uint32_t kSalt = 0x5eed;
constexpr uint32_t kHalf = EDGESHED_FRAC_ONE / 2;

enum Reason { kNone, kCap, kFrac };
// RFC 9000 14.1: the smallest UDP payload that may carry an Initial.
constexpr uint32_t kQuicMinInitial = 1200;

struct Expected {
  Verdict verdict = Verdict::kPass;
  Counters delta{};
};

struct Tally {
  uint64_t frames = 0, runs = 0, tc_refused = 0;
  std::map<std::string, uint64_t> kinds, verdicts;
};

class PacketFuzz {
 public:
  explicit PacketFuzz(const Phase& phase) : phase_(phase) {
    for (uint32_t c = 0; c < EDGESHED_NUM_CLASSES; ++c) {
      const uint32_t frac = c == EDGESHED_CLASS_NORMAL ? kHalf : 0;
      const uint32_t cap = c == EDGESHED_CLASS_BACKGROUND ? 1 : 0;
      dp_.set_class_policy(c, {frac, cap, 0, 0, 0, 0}, kSalt);
    }
    dp_.set_inflight(EDGESHED_CLASS_BACKGROUND, 1);
    // QUIC too on the normal and background ports: background's cap then
    // meets QUIC, to which no cap applies. The critical port is TCP only.
    EXPECT_TRUE(dp_.maps().set_ports(
        {{kNormalPort, EDGESHED_CLASS_NORMAL, EDGESHED_PORT_TCP | EDGESHED_PORT_QUIC},
         {kCriticalPort, EDGESHED_CLASS_CRITICAL},
         {kBackgroundPort, EDGESHED_CLASS_BACKGROUND, EDGESHED_PORT_TCP | EDGESHED_PORT_QUIC}}));
    EXPECT_TRUE(
        dp_.maps().set_prefix(parse_ip_prefix(kCriticalPrefix4).value(), EDGESHED_CLASS_CRITICAL));
    EXPECT_TRUE(dp_.maps().set_prefix(parse_ip_prefix(kBackgroundPrefix6).value(),
                                      EDGESHED_CLASS_BACKGROUND));
    // Read back: set_prefix keeps the trie sizes in the config.
    edgeshed_config cfg = dp_.config();
    cfg.mode = phase.mode;
    cfg.action = phase.action;
    cfg.rst_per_sec_per_cpu = phase.rst_budget;
    // The reflection limit runs for every RST, on every frame shape, at a
    // rate (10 M/s, 1 s of burst) no test run reaches: the oracle's
    // verdicts stay exact.
    cfg.rst_reflect = {10'000'000, 10'000'000, 24, 48, {}};
    cfg.heartbeat_timeout_ns = phase.stale_heartbeat ? 1000000000ull : 0;
    dp_.set_config(cfg);
    if (phase.stale_heartbeat) dp_.set_heartbeat(0);
    last_ = flatten(dp_.stats());
    start_ = last_;
  }

  // Runs one frame through both entry points, twice each, and checks it.
  void check(const Bytes& frame) {
    const FrameVerdict v = classify_frame(frame);
    ++tally_.frames;
    ++tally_.kinds[to_string(v.kind)];
    std::optional<RunResult> first[2];
    for (Entry e : {Entry::kXdp, Entry::kTc}) {
      const char* en = e == Entry::kXdp ? "xdp" : "tc";
      auto [r, d] = run(e, frame);
      if (!r) {
        check_refusal(e, frame, v);
        continue;
      }
      ++tally_.verdicts[std::string(en) + " " + verdict_name(r->verdict)];
      check_outcome(en, frame, v, *r, d);
      auto [again, d2] = run(e, frame);
      add(predicted_, last_expected_);  // the second run must do what the first did
      if (!again || again->verdict != r->verdict || again->out != r->out || d2 != d) {
        fail(frame, v,
             std::string(en) + ": a second run differs: " +
                 (again ? verdict_name(again->verdict) : "refused") + ", counters " + describe(d2) +
                 " (first " + verdict_name(r->verdict) + ", " + describe(d) + ")");
      }
      first[e == Entry::kXdp ? 0 : 1] = std::move(r);
    }
    if (first[0] && first[1] &&
        (first[0]->verdict != first[1]->verdict || first[0]->out != first[1]->out)) {
      fail(frame, v,
           std::string("xdp and tc disagree: ") + verdict_name(first[0]->verdict) + " vs " +
               verdict_name(first[1]->verdict));
    }
  }

  // Counters add up over the whole run: what the oracle predicted, summed,
  // is what the data plane counted.
  void check_totals() {
    const Counters got = last_ - start_;
    if (got != predicted_) {
      ADD_FAILURE() << "counter totals over the run: data plane " << describe(got) << "; predicted "
                    << describe(predicted_);
    }
  }

  void report(const char* test) const {
    std::ostringstream out;
    out << "packet fuzz " << test << ": " << tally_.frames << " frames, " << tally_.runs
        << " test runs, " << tally_.tc_refused << " refused by the tc test harness\n  oracle:";
    for (const auto& [k, n] : tally_.kinds) out << " " << k << " " << n << ";";
    out << "\n  verdicts:";
    for (const auto& [k, n] : tally_.verdicts) out << " " << k << " " << n << ";";
    out << "\n  counters: " << describe(last_ - start_) << "\n";
    std::cout << out.str();
    if (!failures_.empty()) {
      const std::string path = std::string("packet_fuzz_failures.") + test + ".txt";
      std::ofstream file(path);
      for (const auto& f : failures_) file << f << "\n";
      ADD_FAILURE() << failures_.size() << " failing frames (first " << kPrinted
                    << " above), all in " << path;
    }
  }

  // Enough failing frames kept to show the pattern; the rest would be noise.
  bool saturated() const { return failures_.size() >= kKept; }

 private:
  static constexpr size_t kPrinted = 20;
  static constexpr size_t kKept = 2000;

  std::pair<std::optional<RunResult>, Counters> run(Entry e, const Bytes& frame) {
    auto r = dp_.try_run(e, frame);
    ++tally_.runs;
    const Counters now = flatten(dp_.stats());
    const Counters d = now - last_;
    last_ = now;
    return {std::move(r), d};
  }

  // The kernel's skb test harness reads an IP header it was told is there
  // (the ethertype) before the program runs; XDP's has no such check.
  void check_refusal(Entry e, const Bytes& frame, const FrameVerdict& v) {
    ++tally_.tc_refused;
    const uint16_t type = static_cast<uint16_t>(frame[12] << 8 | frame[13]);
    const bool short_ip =
        (type == 0x0800 && frame.size() < 14 + 20) || (type == 0x86dd && frame.size() < 14 + 40);
    if (e != Entry::kTc || !short_ip) {
      fail(frame, v,
           std::string(e == Entry::kXdp ? "xdp" : "tc") +
               ": the test run refused the frame: errno " + std::to_string(errno));
    }
  }

  uint32_t class_of(const FrameVerdict& v) const {
    uint32_t c = v.dport == kCriticalPort     ? EDGESHED_CLASS_CRITICAL
                 : v.dport == kBackgroundPort ? EDGESHED_CLASS_BACKGROUND
                                              : EDGESHED_CLASS_NORMAL;
    if (v.family == AF_INET && v.src[0] == 203 && v.src[1] == 0 && v.src[2] == 113) {
      c = EDGESHED_CLASS_CRITICAL;
    }
    if (v.family == AF_INET6 && v.src[0] == 0x20 && v.src[1] == 0x01 && v.src[2] == 0x0d &&
        v.src[3] == 0xb8 && v.src[4] == 0xff && v.src[5] == 0xff) {
      c = EDGESHED_CLASS_BACKGROUND;
    }
    return c;
  }

  static bool protected_port(uint16_t port) {
    return port == kNormalPort || port == kCriticalPort || port == kBackgroundPort;
  }
  static bool quic_protected_port(uint16_t port) {
    return port == kNormalPort || port == kBackgroundPort;
  }
  // A QUIC Initial the draw decides: to a protected port, not undersized.
  static bool quic_decided(const FrameVerdict& v) {
    return v.kind == FrameKind::kQuicInitial && quic_protected_port(v.dport) &&
           v.payload_len >= kQuicMinInitial;
  }

  // What the data plane must do with the frame; shed_by_hash says how the
  // source-hash draw came out (only the normal class draws).
  Expected expect(const FrameVerdict& v, bool shed_by_hash) const {
    Expected x;
    switch (v.kind) {
      case FrameKind::kUnparsed:
        x.delta[global_index(EDGESHED_GCTR_UNPARSED)] = 1;
        return x;
      case FrameKind::kFragment:
        x.delta[global_index(EDGESHED_GCTR_FRAGMENT)] = 1;
        return x;
      case FrameKind::kOther:
        return x;
      case FrameKind::kTooDeep:
        return expect_too_deep(v, shed_by_hash);
      case FrameKind::kQuicInitial:
        return expect_quic(v, shed_by_hash);
      case FrameKind::kBadChecksum:
      case FrameKind::kNewConnection:
        break;
    }
    if (!protected_port(v.dport)) {
      x.delta[global_index(EDGESHED_GCTR_UNPROTECTED)] = 1;
      return x;
    }
    const uint32_t c = class_of(v);
    if (const auto counter = passed_undecided()) {
      x.delta[cls_index(c, *counter)] = 1;
      return x;
    }
    const Reason reason = c == EDGESHED_CLASS_BACKGROUND               ? kCap
                          : c == EDGESHED_CLASS_NORMAL && shed_by_hash ? kFrac
                                                                       : kNone;
    if (reason == kNone) {
      x.delta[cls_index(c, EDGESHED_CTR_ADMITTED)] = 1;
      return x;
    }
    if (v.kind == FrameKind::kBadChecksum) {  // the kernel drops it: nothing to shed
      x.delta[global_index(EDGESHED_GCTR_BAD_CHECKSUM)] = 1;
      return x;
    }
    const int offset = reason == kCap ? 0 : 1;
    if (phase_.mode == EDGESHED_MODE_OBSERVE) {
      x.delta[cls_index(c, EDGESHED_CTR_WOULD_SHED_CAP + offset)] = 1;
      return x;
    }
    x.delta[cls_index(c, EDGESHED_CTR_SHED_CAP + offset)] = 1;
    x.verdict = Verdict::kDrop;
    if (v.first_fragment) {
      x.delta[global_index(EDGESHED_GCTR_SHED_FRAGMENT)] = 1;
      return x;
    }
    if (phase_.action == EDGESHED_ACTION_RST) {
      // The fixture's own MAC, at XDP; at TC, the test run's loopback
      // marks only a frame to it PACKET_HOST.
      if (v.dst_mac != kDefaultDstMac) {
        x.delta[global_index(EDGESHED_GCTR_RST_NOT_TO_HOST)] = 1;
      } else if (!rst_may_answer(v)) {
        x.delta[global_index(EDGESHED_GCTR_RST_NOT_UNICAST)] = 1;
      } else if (phase_.rst_budget > 0) {
        x.delta[cls_index(c, EDGESHED_CTR_RST_SENT)] = 1;
        x.verdict = Verdict::kTx;
      } else {
        x.delta[cls_index(c, EDGESHED_CTR_RST_CAPPED)] = 1;
      }
    }
    return x;
  }

  // Mode off, then a silent controller, pass a new connection of either
  // protocol before any decision: the class counter it moves, or nullopt
  // when it is decided.
  std::optional<int> passed_undecided() const {
    if (phase_.mode == EDGESHED_MODE_OFF) return EDGESHED_CTR_PASS_MODE_OFF;
    if (phase_.stale_heartbeat) return EDGESHED_CTR_FAIL_OPEN;
    return std::nullopt;
  }

  // A new QUIC connection: the class's fraction and rate apply, no cap, and
  // a shed Initial is dropped, never answered.
  Expected expect_quic(const FrameVerdict& v, bool shed_by_hash) const {
    Expected x;
    if (!quic_protected_port(v.dport)) return x;
    const uint32_t c = class_of(v);
    if (const auto counter = passed_undecided()) {
      x.delta[quic_index(c, *counter)] = 1;
      return x;
    }
    if (v.payload_len < kQuicMinInitial) {
      x.delta[global_index(EDGESHED_GCTR_QUIC_UNDERSIZED)] = 1;
      if (phase_.mode == EDGESHED_MODE_ENFORCE) x.verdict = Verdict::kDrop;
      return x;
    }
    if (!(c == EDGESHED_CLASS_NORMAL && shed_by_hash)) {
      x.delta[quic_index(c, EDGESHED_CTR_ADMITTED)] = 1;
      return x;
    }
    if (v.bad_ipv4_checksum) {
      x.delta[global_index(EDGESHED_GCTR_BAD_CHECKSUM)] = 1;
      return x;
    }
    if (phase_.mode == EDGESHED_MODE_OBSERVE) {
      x.delta[quic_index(c, EDGESHED_CTR_WOULD_SHED_FRAC)] = 1;
      return x;
    }
    x.delta[quic_index(c, EDGESHED_CTR_SHED_FRAC)] = 1;
    if (v.first_fragment) x.delta[global_index(EDGESHED_GCTR_SHED_FRAGMENT)] = 1;
    x.verdict = Verdict::kDrop;
    return x;
  }

  // A port the cut header shows must be protected for its transport.
  static bool too_deep_protected(const FrameVerdict& v) {
    if (v.cut_proto == IPPROTO_UDP) return quic_protected_port(v.dport);
    return v.cut_proto == 0 || protected_port(v.dport);
  }

  // Headers too deep to read whole: the class of the port the cut header
  // shows (none: normal's) and of the source, and in enforce mode a drop
  // while that class sheds by cap (TCP) or by the draw.
  Expected expect_too_deep(const FrameVerdict& v, bool shed_by_hash) const {
    Expected x;
    const uint32_t c = class_of(v);
    if (!too_deep_protected(v)) {
      x.delta[global_index(EDGESHED_GCTR_TOO_DEEP)] = 1;
      return x;
    }
    const bool enforcing = phase_.mode == EDGESHED_MODE_ENFORCE && !phase_.stale_heartbeat;
    const bool sheds = (c == EDGESHED_CLASS_BACKGROUND && v.cut_proto != IPPROTO_UDP) ||
                       (c == EDGESHED_CLASS_NORMAL && shed_by_hash);
    if (enforcing && sheds) {
      x.delta[global_index(EDGESHED_GCTR_SHED_TOO_DEEP)] = 1;
      x.verdict = Verdict::kDrop;
    } else {
      x.delta[global_index(EDGESHED_GCTR_TOO_DEEP)] = 1;
    }
    return x;
  }

  void check_outcome(const char* en, const Bytes& frame, const FrameVerdict& v, const RunResult& r,
                     const Counters& d) {
    const bool too_deep_draws = v.kind == FrameKind::kTooDeep && too_deep_protected(v) &&
                                class_of(v) == EDGESHED_CLASS_NORMAL &&
                                phase_.mode == EDGESHED_MODE_ENFORCE && !phase_.stale_heartbeat;
    const bool syn = v.kind == FrameKind::kNewConnection || v.kind == FrameKind::kBadChecksum;
    const bool decided = (syn && protected_port(v.dport)) || quic_decided(v);
    const bool draws = too_deep_draws || (decided && class_of(v) == EDGESHED_CLASS_NORMAL);
    // The normal class's draw is the one thing the oracle does not compute;
    // which way it went is read from the counters and must then be
    // consistent in everything else, and the same for every frame of the
    // same source.
    bool shed = false;
    if (draws) {
      shed = d[cls_index(EDGESHED_CLASS_NORMAL, EDGESHED_CTR_SHED_FRAC)] != 0 ||
             d[cls_index(EDGESHED_CLASS_NORMAL, EDGESHED_CTR_WOULD_SHED_FRAC)] != 0 ||
             d[global_index(EDGESHED_GCTR_SHED_TOO_DEEP)] != 0 ||
             d[quic_index(EDGESHED_CLASS_NORMAL, EDGESHED_CTR_SHED_FRAC)] != 0 ||
             d[quic_index(EDGESHED_CLASS_NORMAL, EDGESHED_CTR_WOULD_SHED_FRAC)] != 0 ||
             ((v.kind == FrameKind::kBadChecksum || v.bad_ipv4_checksum) &&
              d[global_index(EDGESHED_GCTR_BAD_CHECKSUM)] != 0);
      // The family is part of the key: a frame too deep for an IP header
      // draws on its source MAC.
      const std::string key =
          v.family == 0 ? "mac:" + std::string(reinterpret_cast<const char*>(v.src_mac.data()), 6)
                        : std::to_string(v.family) + ":" +
                              std::string(reinterpret_cast<const char*>(v.src.data()),
                                          v.family == AF_INET ? 4 : 16);
      auto [it, fresh] = draw_by_source_.emplace(key, shed);
      if (!fresh && it->second != shed && phase_.mode != EDGESHED_MODE_OFF &&
          !phase_.stale_heartbeat) {
        fail(frame, v, std::string(en) + ": one source both shed and admitted by the source hash");
      }
    }
    const Expected x = expect(v, shed);
    add(predicted_, x.delta);
    last_expected_ = x.delta;
    if (r.verdict != x.verdict || d != x.delta) {
      fail(frame, v,
           std::string(en) + ": got " + verdict_name(r.verdict) + ", counters " + describe(d) +
               "; want " + verdict_name(x.verdict) + ", counters " + describe(x.delta));
      return;
    }
    if (r.verdict != Verdict::kTx) {
      if (r.out != frame) fail(frame, v, std::string(en) + ": passed or dropped, but modified");
      return;
    }
    const std::string why = check_rst(frame, v, r.out);
    if (!why.empty()) fail(frame, v, std::string(en) + ": bad RST: " + why + " " + hex(r.out));
  }

  // The refusal of the SYN the oracle read, byte for byte what rst.bpf.h's
  // comment promises (RFC 9293 3.10.7.1), checked with the independent
  // parser and checksums of tests/common.
  static std::string check_rst(const Bytes& syn, const FrameVerdict& v, const Bytes& out) {
    const size_t ip_len = v.family == AF_INET ? 40 : 60;
    if (out.size() != v.l3_offset + ip_len) return "length " + std::to_string(out.size());
    if (!std::equal(out.begin(), out.begin() + 6, syn.begin() + 6) ||
        !std::equal(out.begin() + 6, out.begin() + 12, syn.begin())) {
      return "MACs not swapped";
    }
    if (!std::equal(out.begin() + 12, out.begin() + static_cast<long>(v.l3_offset),
                    syn.begin() + 12)) {
      return "VLAN tags or ethertype changed";
    }
    auto p = parse_frame(out);
    if (!p) return "does not parse";
    char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];
    inet_ntop(v.family, v.src.data(), src, sizeof(src));
    inet_ntop(v.family, v.dst.data(), dst, sizeof(dst));
    const uint32_t ack = v.seq + 1 + v.payload_len;
    if (p->family != v.family || p->src_ip != dst || p->dst_ip != src) return "addresses";
    if (!p->exact_length || p->is_fragment || !p->ipv6_ext_types.empty()) return "IP layer";
    if (v.family == AF_INET && (!p->ipv4_checksum_ok || p->ihl != 5 || !p->dont_fragment)) {
      return "IPv4 header";
    }
    if (!p->has_tcp || p->sport != v.dport || p->dport != v.sport) return "ports";
    if (p->tcp_flags != (kRst | kAck) || p->seq != 0 || p->ack != ack) return "flags, seq or ack";
    if (p->doff != 5 || !p->payload.empty() || !p->tcp_checksum_ok) return "TCP header";
    return "";
  }

  void fail(const Bytes& frame, const FrameVerdict& v, const std::string& what) {
    const std::string line = std::string(phase_.name) + ": " + what + "; oracle " +
                             to_string(v.kind) + " (" + v.why + "); frame " + hex(frame);
    if (failures_.size() < kPrinted) ADD_FAILURE() << line;
    if (failures_.size() < kKept) failures_.push_back(line);
  }

  static void add(Counters& sum, const Counters& d) {
    for (size_t i = 0; i < kNumCounters; ++i) sum[i] += d[i];
  }

  Phase phase_;
  DataplaneFixture dp_;
  Counters last_{}, start_{}, predicted_{}, last_expected_{};
  std::map<std::string, bool> draw_by_source_;
  std::vector<std::string> failures_;
  Tally tally_;
};

class PacketFuzzTest : public ::testing::TestWithParam<Phase> {};

TEST_P(PacketFuzzTest, RandomAndMutatedFrames) {
  const uint64_t frames = env_u64("EDGESHED_FUZZ_FRAMES", 150000);
  const uint64_t seconds = env_u64("EDGESHED_FUZZ_SECONDS", 0);
  const uint64_t seed = env_u64("EDGESHED_FUZZ_SEED", 1);
  std::cout << "seed " << seed << " (EDGESHED_FUZZ_SEED), at most " << frames
            << " frames (EDGESHED_FUZZ_FRAMES)";
  if (seconds) std::cout << " or " << seconds << " s (EDGESHED_FUZZ_SECONDS)";
  std::cout << "\n";
  // Each phase draws its own stream, so phases do not repeat one another.
  FrameGenerator gen(seed * 0x9e3779b97f4a7c15ull + std::hash<std::string>{}(GetParam().name));
  PacketFuzz fuzz(GetParam());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  for (uint64_t i = 0; i < frames && !fuzz.saturated(); ++i) {
    // The clock is read once per thousand frames: a bound, not a timed assert.
    if (seconds && i % 1000 == 0 && std::chrono::steady_clock::now() > deadline) break;
    fuzz.check(gen.next());
  }
  fuzz.check_totals();
  fuzz.report(GetParam().name);
}

INSTANTIATE_TEST_SUITE_P(Phases, PacketFuzzTest, ::testing::ValuesIn(kPhases), phase_name);

// Templates for the byte-by-byte sweep: one of each shape the parser
// handles, and the edges of what it walks.
struct Template {
  const char* name;
  Bytes frame;
  FrameKind kind;
};

std::vector<Template> sweep_templates() {
  constexpr auto kNew = FrameKind::kNewConnection;
  TcpSpec fin_data;
  fin_data.flags = kSyn | kFin;
  fin_data.seq = 0xfffffff0;
  fin_data.payload = Bytes(10, 'x');
  TcpSpec wrap_data = fin_data;  // the acknowledgement wraps past 2^32
  wrap_data.flags = kSyn;
  TcpSpec ack;
  ack.flags = kAck;
  ack.ack = 1;
  Bytes padded = PacketBuilder().ipv4("192.0.2.9", "198.51.100.2").tcp(TcpSpec{}).build();
  padded.resize(padded.size() + 6, 0);
  auto six = PacketBuilder::syn_v6();
  for (int i = 0; i < 6; ++i) six.ipv6_ext(IPPROTO_DSTOPTS, 8);
  auto seven = six;
  seven.ipv6_ext(IPPROTO_DSTOPTS, 8);
  auto five_tags = PacketBuilder::syn_v4();
  for (int i = 0; i < 5; ++i) five_tags.vlan(0x8100, 0);
  return {
      {"v4", PacketBuilder::syn_v4().build(), kNew},
      {"v4 options, one tag",
       PacketBuilder::syn_v4().vlan(0x8100, 5).ipv4_options(Bytes(8, 1)).build(), kNew},
      {"v4 two tags, critical",
       PacketBuilder::syn_v4(1234, kCriticalPort).vlan(0x88a8, 1).vlan(0x8100, 2).build(), kNew},
      {"v4 SYN-FIN with data: a listener discards it",
       PacketBuilder().ipv4("192.0.2.3", "198.51.100.2").tcp(fin_data).build(), FrameKind::kOther},
      {"v4 SYN with data, sequence wraps",
       PacketBuilder().ipv4("192.0.2.3", "198.51.100.2").tcp(wrap_data).build(), kNew},
      {"v4 padded, no options", padded, kNew},
      {"v4 critical override", PacketBuilder::syn_v4(40000, kNormalPort, "203.0.113.7").build(),
       kNew},
      {"v4 ACK", PacketBuilder().ipv4("192.0.2.1", "198.51.100.2").tcp(ack).build(),
       FrameKind::kOther},
      {"v4 first fragment", PacketBuilder::syn_v4().ipv4_fragment(true, 0).build(), kNew},
      {"v4 first fragment, TCP header cut",
       PacketBuilder::syn_v4().ipv4_fragment(true, 0).ip_total_length_override(20 + 16).build(),
       FrameKind::kTooDeep},
      {"v4 five tags", five_tags.build(), FrameKind::kTooDeep},
      {"v6 first fragment", PacketBuilder::syn_v6().ipv6_fragment(0, true).build(), kNew},
      {"v6 seven extension headers", seven.build(), FrameKind::kTooDeep},
      {"v6", PacketBuilder::syn_v6().build(), kNew},
      {"v6 hop, routing, atomic fragment, dest",
       PacketBuilder::syn_v6(40000, kBackgroundPort)
           .ipv6_ext(IPPROTO_HOPOPTS, 8)
           .ipv6_ext(IPPROTO_ROUTING, 16)
           .ipv6_fragment(0, false)
           .ipv6_ext(IPPROTO_DSTOPTS, 8)
           .build(),
       kNew},
      {"v6 two tags", PacketBuilder::syn_v6().vlan(0x88a8, 7).vlan(0x8100, 8).build(), kNew},
      {"v6 background override",
       PacketBuilder::syn_v6(40000, kNormalPort, "2001:db8:ffff::1").build(), kNew},
      {"v6 six extension headers", six.build(), kNew},
  };
}

// Every byte of every template set to each of its 256 values.
TEST(PacketFuzzSweep, EveryByteEveryValue) {
  PacketFuzz fuzz(kPhases[0]);
  for (const auto& t : sweep_templates()) {
    ASSERT_EQ(classify_frame(t.frame).kind, t.kind) << t.name;
    for (size_t pos = 0; pos < t.frame.size() && !fuzz.saturated(); ++pos) {
      Bytes f = t.frame;
      for (int value = 0; value < 256; ++value) {
        if (value == t.frame[pos]) continue;
        f[pos] = static_cast<uint8_t>(value);
        fuzz.check(f);
      }
    }
  }
  fuzz.check_totals();
  fuzz.report("sweep");
}

}  // namespace
}  // namespace edgeshed::testing
