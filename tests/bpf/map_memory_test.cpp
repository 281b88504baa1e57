// No unbounded per-source state in any map: a flood of a million SYNs from
// random IPv4 and IPv6 sources through each entry point leaves the memory
// and the entry count of every map of the data plane exactly as they were,
// but for the one map meant to hold sender networks, the reflection limit's
// LRU: its memory is fixed when it is created, and its entries stay within
// its size.
//
// Memory is the kernel's own account, the "memlock" of /proc/self/fdinfo
// (what `bpftool map show` prints); entries are counted by walking the keys.
// A last step adds source prefixes from userspace, to show that the same
// measurement does see a map grow when one does.
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "bpf/dataplane_fixture.h"
#include "common/ip_prefix.h"
#include "edgeshed.skel.h"

namespace edgeshed::testing {
namespace {

constexpr uint64_t kFloodSyns = 1000000;  // per entry point
constexpr uint64_t kSecond = 1000000000ull;

struct MapUsage {
  std::string name;
  uint32_t id = 0;
  uint32_t type = 0;
  uint32_t max_entries = 0;
  uint64_t memlock = 0;
  std::optional<uint64_t> entries;  // nullopt: the map type has no key walk
};

// The kernel's memory account of the map behind fd.
uint64_t memlock_of(int fd) {
  std::ifstream in("/proc/self/fdinfo/" + std::to_string(fd));
  std::string key;
  uint64_t value = 0;
  while (in >> key) {
    if (key == "memlock:") {
      in >> value;
      return value;
    }
    in.ignore(1 << 10, '\n');
  }
  ADD_FAILURE() << "no memlock line in the fdinfo of fd " << fd;
  return 0;
}

// Keys walked with get_next_key, bounded by max_entries + 1: a walk that
// went on would itself be a finding.
std::optional<uint64_t> count_entries(int fd, const bpf_map_info& info) {
  std::vector<uint8_t> key(info.key_size), next(info.key_size);
  uint64_t n = 0;
  const void* prev = nullptr;
  while (n <= info.max_entries) {
    if (bpf_map_get_next_key(fd, prev, next.data()) != 0) {
      if (errno == ENOENT) return n;
      return std::nullopt;  // sk storage: no key walk
    }
    ++n;
    key.swap(next);
    prev = key.data();
  }
  ADD_FAILURE() << info.name << ": more keys than max_entries";
  return n;
}

std::vector<MapUsage> snapshot(const Skeleton& skel) {
  std::vector<MapUsage> out;
  bpf_map* map;
  bpf_object__for_each_map(map, skel->obj) {
    const int fd = bpf_map__fd(map);
    bpf_map_info info{};
    uint32_t len = sizeof(info);
    if (bpf_obj_get_info_by_fd(fd, &info, &len) != 0) {
      ADD_FAILURE() << "map info of " << bpf_map__name(map);
      continue;
    }
    out.push_back({bpf_map__name(map), info.id, info.type, info.max_entries, memlock_of(fd),
                   count_entries(fd, info)});
  }
  return out;
}

// Ids of the maps a program uses.
std::vector<uint32_t> map_ids_of(const bpf_program* prog) {
  bpf_prog_info info{};
  uint32_t len = sizeof(info);
  const int fd = bpf_program__fd(prog);
  EXPECT_EQ(bpf_obj_get_info_by_fd(fd, &info, &len), 0);
  std::vector<uint32_t> ids(info.nr_map_ids);
  info = {};
  info.nr_map_ids = static_cast<uint32_t>(ids.size());
  info.map_ids = reinterpret_cast<uint64_t>(ids.data());
  len = sizeof(info);
  EXPECT_EQ(bpf_obj_get_info_by_fd(fd, &info, &len), 0);
  ids.resize(info.nr_map_ids);
  return ids;
}

const char* type_name(uint32_t type) {
  switch (type) {
    case BPF_MAP_TYPE_ARRAY:
      return "array";
    case BPF_MAP_TYPE_PERCPU_ARRAY:
      return "percpu";
    case BPF_MAP_TYPE_LPM_TRIE:
      return "lpm";
    case BPF_MAP_TYPE_SK_STORAGE:
      return "sk_stor";
    case BPF_MAP_TYPE_RINGBUF:
      return "ringbuf";
    default:
      return "other";
  }
}

void print(const std::vector<MapUsage>& from, const std::vector<MapUsage>& to, const char* title) {
  std::printf("%s\n%-16s %-7s %8s %12s %12s %10s %10s\n", title, "map", "type", "max", "memlock",
              "memlock", "entries", "entries");
  std::printf("%-16s %-7s %8s %12s %12s %10s %10s\n", "", "", "entries", "before", "after",
              "before", "after");
  auto entries = [](const std::optional<uint64_t>& e) {
    return e ? std::to_string(*e) : std::string("n/a");
  };
  uint64_t total_before = 0, total_after = 0;
  for (size_t i = 0; i < from.size() && i < to.size(); ++i) {
    std::printf("%-16s %-7s %8u %12llu %12llu %10s %10s\n", from[i].name.c_str(),
                type_name(from[i].type), from[i].max_entries,
                static_cast<unsigned long long>(from[i].memlock),
                static_cast<unsigned long long>(to[i].memlock), entries(from[i].entries).c_str(),
                entries(to[i].entries).c_str());
    total_before += from[i].memlock;
    total_after += to[i].memlock;
  }
  std::printf("%-16s %-7s %8s %12llu %12llu\n", "total", "", "",
              static_cast<unsigned long long>(total_before),
              static_cast<unsigned long long>(total_after));
}

// A SYN template whose source address and ports are patched in place for
// each packet of the flood: the data plane does not verify checksums, and
// building a million frames through the builder would take longer than the
// flood itself.
constexpr size_t kIpv4At = 14, kIpv4Len = 20, kIpv4ChecksumAt = 10;

struct SynTemplate {
  Bytes frame;
  size_t src_offset;
  size_t src_len;
  size_t tcp_offset;
};

SynTemplate syn_template(bool v6) {
  if (v6) return {PacketBuilder::syn_v6().build(), 14 + 8, 16, 14 + 40};
  return {PacketBuilder::syn_v4().build(), 14 + 12, 4, 14 + 20};
}

class MapMemoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Every map the entry points read is on the path: prefix overrides in
    // both tries, a cap (in-flight counts), a source-hash fraction, a token
    // bucket, RSTs with their per-CPU budget, a fresh heartbeat.
    ASSERT_TRUE(
        dp_.maps().set_prefix(parse_ip_prefix("203.0.113.0/24").value(), EDGESHED_CLASS_CRITICAL));
    ASSERT_TRUE(dp_.maps().set_prefix(parse_ip_prefix("2001:db8:ffff::/48").value(),
                                      EDGESHED_CLASS_BACKGROUND));
    auto cfg = dp_.config();
    cfg.action = EDGESHED_ACTION_RST;
    cfg.rst_reflect = {EDGESHED_DEFAULT_RST_REFLECT_PER_SEC, EDGESHED_DEFAULT_RST_REFLECT_BURST,
                       EDGESHED_DEFAULT_RST_REFLECT_PREFIX4, EDGESHED_DEFAULT_RST_REFLECT_PREFIX6,
                       EDGESHED_DEFAULT_RST_REFLECT_PER_CONN};
    cfg.heartbeat_timeout_ns = 3600 * kSecond;
    dp_.set_config(cfg);
    dp_.set_class_policy(EDGESHED_CLASS_CRITICAL, {0, 0, 1000, 100, 0, 0});
    dp_.set_class_policy(EDGESHED_CLASS_NORMAL, {EDGESHED_FRAC_ONE / 2, 0, 0, 0, 0, 0}, 7);
    dp_.set_class_policy(EDGESHED_CLASS_BACKGROUND, {0, 1, 0, 0, 0, 0}, 7);
    dp_.set_inflight(EDGESHED_CLASS_BACKGROUND, 1);
    dp_.set_heartbeat(monotonic_ns());
  }

  // kFloodSyns SYNs, alternately IPv4 and IPv6, each from a new random
  // source and port, to the protected and unprotected ports.
  void flood(Entry entry, uint64_t seed) {
    std::mt19937_64 rng(seed);
    SynTemplate t[2] = {syn_template(false), syn_template(true)};
    static constexpr uint16_t kPorts[] = {kNormalPort, kCriticalPort, kBackgroundPort,
                                          kUnprotectedPort};
    for (uint64_t i = 0; i < kFloodSyns; ++i) {
      SynTemplate& s = t[i % 2];
      const uint64_t r = rng();
      for (size_t b = 0; b < s.src_len; b += 8) {
        const uint64_t bits = b == 0 ? r : rng();
        for (size_t k = 0; k < 8 && b + k < s.src_len; ++k) {
          s.frame[s.src_offset + b + k] = static_cast<uint8_t>(bits >> (8 * k));
        }
      }
      if (s.src_len == 4) {  // a spoofer's IPv4 header is valid, or the kernel drops it
        const auto sum = ipv4_header_checksum(std::span(s.frame).subspan(kIpv4At, kIpv4Len));
        s.frame[kIpv4At + kIpv4ChecksumAt] = static_cast<uint8_t>(sum >> 8);
        s.frame[kIpv4At + kIpv4ChecksumAt + 1] = static_cast<uint8_t>(sum);
      }
      const uint16_t dport = kPorts[(r >> 40) % 4];
      s.frame[s.tcp_offset] = static_cast<uint8_t>(r >> 48);  // source port
      s.frame[s.tcp_offset + 1] = static_cast<uint8_t>(r >> 56);
      s.frame[s.tcp_offset + 2] = static_cast<uint8_t>(dport >> 8);
      s.frame[s.tcp_offset + 3] = static_cast<uint8_t>(dport);
      if (!dp_.try_run(entry, s.frame)) {
        ADD_FAILURE() << "test run refused SYN " << i;
        return;
      }
    }
  }

  DataplaneFixture dp_;
};

TEST_F(MapMemoryTest, SpoofedFloodLeavesEveryMapAsItWas) {
  // Every map an entry point uses must be one whose entries can be counted:
  // a map the flood could fill is then a map this test sees fill.
  const auto before = snapshot(dp_.skeleton());
  for (const bpf_program* prog :
       {dp_.skeleton()->progs.edgeshed_xdp, dp_.skeleton()->progs.edgeshed_tc}) {
    for (uint32_t id : map_ids_of(prog)) {
      bool found = false;
      for (const auto& m : before) {
        if (m.id != id) continue;
        found = true;
        // A ring buffer's memory is fixed when it is created (its size is
        // max_entries bytes), so it cannot grow with sources; the memlock
        // comparison below still covers it.
        if (m.type == BPF_MAP_TYPE_RINGBUF) continue;
        EXPECT_TRUE(m.entries.has_value())
            << bpf_program__name(prog) << " uses " << m.name << ", whose entries cannot be counted";
      }
      EXPECT_TRUE(found) << bpf_program__name(prog) << " uses map id " << id
                         << ", which is not the skeleton's";
    }
  }

  const auto stats_before = dp_.stats();
  flood(Entry::kXdp, 1);
  flood(Entry::kTc, 2);
  const auto stats_after = dp_.stats();
  const auto after = snapshot(dp_.skeleton());
  print(before, after, "maps before and after 2 x 1,000,000 SYNs from random sources:");

  // The flood did go through the decision: SYNs were admitted, shed by
  // each reason and refused with RSTs until the budget ran out.
  uint64_t decided = 0;
  for (uint32_t c = 0; c < EDGESHED_NUM_CLASSES; ++c) {
    for (int k : {EDGESHED_CTR_ADMITTED, EDGESHED_CTR_SHED_CAP, EDGESHED_CTR_SHED_FRAC,
                  EDGESHED_CTR_SHED_RATE}) {
      decided += class_delta(stats_after, stats_before, c, k);
    }
  }
  const uint64_t unprotected = global_delta(stats_after, stats_before, EDGESHED_GCTR_UNPROTECTED);
  std::printf("SYNs decided %llu, to an unprotected port %llu\n",
              static_cast<unsigned long long>(decided),
              static_cast<unsigned long long>(unprotected));
  EXPECT_EQ(decided + unprotected, 2 * kFloodSyns);
  EXPECT_GT(class_delta(stats_after, stats_before, EDGESHED_CLASS_NORMAL, EDGESHED_CTR_SHED_FRAC),
            0u);
  EXPECT_GT(
      class_delta(stats_after, stats_before, EDGESHED_CLASS_BACKGROUND, EDGESHED_CTR_SHED_CAP), 0u);
  EXPECT_GT(class_delta(stats_after, stats_before, EDGESHED_CLASS_CRITICAL, EDGESHED_CTR_SHED_RATE),
            0u);
  EXPECT_GT(class_delta(stats_after, stats_before, EDGESHED_CLASS_NORMAL, EDGESHED_CTR_RST_CAPPED),
            0u);
  EXPECT_GT(unprotected, 0u);

  ASSERT_EQ(before.size(), after.size());
  bool saw_reflect_map = false;
  for (size_t i = 0; i < before.size(); ++i) {
    EXPECT_EQ(after[i].memlock, before[i].memlock) << before[i].name;
    if (before[i].name == "es_rst_reflect") {
      saw_reflect_map = true;
      EXPECT_EQ(before[i].max_entries, static_cast<uint32_t>(EDGESHED_RST_REFLECT_ENTRIES));
      EXPECT_GT(after[i].entries.value_or(0), 0u) << "the flood's RSTs never reached the limit";
      EXPECT_LE(after[i].entries.value_or(UINT64_MAX), before[i].max_entries);
      continue;
    }
    EXPECT_EQ(after[i].entries, before[i].entries) << before[i].name;
  }
  EXPECT_TRUE(saw_reflect_map);

  // The measurement can see growth: a thousand /32 overrides written from
  // userspace show up in the entries and in the memory of the trie.
  for (int i = 0; i < 1000; ++i) {
    const std::string p = "192.0.2." + std::to_string(i % 250) + "/32";
    const std::string q = "2001:db8:1::" + std::to_string(i) + "/128";
    ASSERT_TRUE(
        dp_.maps().set_prefix(parse_ip_prefix(i < 250 ? p : q).value(), EDGESHED_CLASS_NORMAL));
  }
  const auto grown = snapshot(dp_.skeleton());
  print(after, grown, "the same maps after 1,000 prefixes written from userspace (the control):");
  for (size_t i = 0; i < after.size(); ++i) {
    if (after[i].name == "es_src4" || after[i].name == "es_src6") {
      EXPECT_GT(grown[i].memlock, after[i].memlock) << after[i].name;
      EXPECT_GT(grown[i].entries.value_or(0), after[i].entries.value_or(0)) << after[i].name;
    }
  }
}

}  // namespace
}  // namespace edgeshed::testing
