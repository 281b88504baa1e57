// One interface's status: `status --json` keeps its keys and their order,
// and what status and top read back is what was written.
#include "cli/interface_status.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace edgeshed {
namespace {

using Json = nlohmann::ordered_json;

InterfaceStatus every_field() {
  InterfaceStatus s;
  s.iface = "eth0";
  s.abi_version = EDGESHED_ABI_VERSION;
  s.hook = "xdp";
  s.mode = "observe";
  s.action = "rst";
  s.draw = "source_hash";
  s.heartbeat_timeout_ms = 1000;
  s.heartbeat_age_ms = 4000;
  s.fail_open = true;
  s.fail_open_reason = "no controller heartbeat for 4000 ms (timeout 1000 ms)";
  s.events_per_sec_per_cpu = 100;
  s.rst_per_sec_per_cpu = 1000;
  s.rst_reflect = {50, 10, 24, 48, 2};
  s.hash_prefix_v4 = 32;
  s.hash_prefix_v6 = 64;
  s.level = 2;
  s.policy_generation = 77;
  s.ports = {{80, "critical", {"tcp"}, "pass", "net:[4026532001]", "cgroup", 2, 7, 21},
             {443,
              "normal",
              {"tcp", "quic"},
              "refuse",
              std::nullopt,
              std::nullopt,
              std::nullopt,
              std::nullopt,
              std::nullopt}};
  for (size_t c = 0; c < EDGESHED_NUM_CLASSES; ++c) {
    auto& k = s.classes[c];
    k.shed_fraction = 0.25 * static_cast<double>(c);
    k.inflight_cap = 10 + c;
    k.tokens_per_sec = 100;
    k.burst = 20;
    k.inflight = 3;
    k.connections = 7;
    k.connection_cap = 50;
    for (int i = 0; i < EDGESHED_NUM_COUNTERS; ++i) {
      k.counters.values[i] = 100 * c + i;
      s.quic.classes[c].values[i] = 1000 * c + i;
    }
  }
  s.quic.protected_ports = true;
  for (size_t i = 0; i < s.counters.size(); ++i) s.counters[i] = i + 1;
  s.rates = RatesStatus{0.5, {}};
  s.rates->classes[1] = {10, 6, 1, 2, 3, 0.5, 0, 6, 0};
  s.fail_static_note = "a note";
  return s;
}

TEST(InterfaceStatus, SurvivesItsJson) {
  const auto s = every_field();
  auto back = interface_status_from_json(Json::parse(to_json(s).dump()));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, s);
  InterfaceStatus quiet;  // no optional field set
  quiet.iface = "eth1";
  auto again = interface_status_from_json(to_json(quiet));
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(*again, quiet);
  EXPECT_TRUE(to_json(quiet)["heartbeat_age_ms"].is_null());
  EXPECT_FALSE(to_json(quiet).contains("rates"));
}

// The keys and their order are what `status --json` printed before the
// status had a type: scripts and the netns tests read them.
TEST(InterfaceStatus, KeepsTheKeysOfStatusJson) {
  const Json j = to_json(every_field());
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"iface",
                                            "abi_version",
                                            "hook",
                                            "mode",
                                            "action",
                                            "draw",
                                            "heartbeat_timeout_ms",
                                            "heartbeat_age_ms",
                                            "fail_open",
                                            "fail_open_reason",
                                            "events_per_sec_per_cpu",
                                            "rst_per_sec_per_cpu",
                                            "rst_reflect",
                                            "hash_prefix_v4",
                                            "hash_prefix_v6",
                                            "level",
                                            "policy_generation",
                                            "ports",
                                            "classes",
                                            "quic",
                                            "counters",
                                            "rates",
                                            "fail_static_note"}));
  EXPECT_EQ(j["rst_reflect"], Json::parse(R"({"per_sec": 50, "burst": 10, "prefix_v4": 24,
                                              "prefix_v6": 48, "per_conn": 2})"));
  EXPECT_EQ(j["ports"][1], Json::parse(R"({"port": 443, "class": "normal",
                                           "protocols": ["tcp", "quic"], "keepalive": "refuse",
                                           "netns": null})"));
  EXPECT_EQ(j["ports"][0]["netns"], "net:[4026532001]");
  EXPECT_EQ(j["classes"]["normal"]["counters"]["shed_fraction"], 102);
  EXPECT_EQ(j["classes"]["background"]["inflight_cap"], 12);
  EXPECT_EQ(j["quic"]["classes"]["critical"]["counters"]["admitted"], 0);
  EXPECT_EQ(j["quic"]["protected"], true);
  EXPECT_EQ(j["quic"]["inflight_cap"], "not applied: the kernel counts no live QUIC connections");
  EXPECT_EQ(j["rates"]["classes"]["normal"]["would_shed"], 0.5);
  EXPECT_EQ(j["rates"]["interval_s"], 0.5);
}

TEST(InterfaceStatus, AnUnreadableInterfaceIsItsNameAndError) {
  InterfaceStatus s;
  s.iface = "eth9";
  s.error = "no data plane pinned";
  EXPECT_EQ(to_json(s), Json::parse(R"({"iface": "eth9", "error": "no data plane pinned"})"));
  auto back = interface_status_from_json(to_json(s));
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, s);
}

TEST(InterfaceStatus, AMissingKeyIsAnError) {
  Json j = to_json(every_field());
  j["classes"]["normal"].erase("inflight");
  auto r = interface_status_from_json(j);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("inflight"), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace edgeshed
