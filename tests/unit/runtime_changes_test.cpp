// Operator changes at runtime: requests, expiry, persistence, effect on the
// law's overrides and on the config the data plane gets.
#include "daemon/runtime_changes.h"
#include "signals/signal_kinds.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace edgeshed::daemon {
namespace {

using nlohmann::json;
using std::chrono::seconds;

const WallTime kNow = WallTime(std::chrono::hours(24 * 365 * 56));

config::Config base_config() {
  auto cfg = signals::parse_config(R"(
[[interface]]
name = "eth0"
[[port]]
port = 80
[[port]]
port = 443
class = "critical"
[[prefix]]
cidr = "192.0.2.0/24"
class = "critical"
)",
                                   "test.toml");
  EXPECT_TRUE(cfg) << cfg.error().message;
  return *cfg;
}

TEST(RuntimeChanges, ModeWithDurationExpiresAndIsLoggedOnce) {
  RuntimeChanges rc;
  auto r = rc.apply({{"op", "mode"}, {"mode", "enforce"}, {"for_s", 60}}, kNow);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, "mode enforce for 60 s");
  auto o = rc.law_overrides(kNow, std::chrono::nanoseconds(seconds(1000)));
  ASSERT_TRUE(o.mode);
  EXPECT_EQ(o.mode->mode, law::Mode::kEnforce);
  EXPECT_EQ(*o.mode->expires_at, std::chrono::nanoseconds(seconds(1060)));
  EXPECT_TRUE(rc.expire(kNow + seconds(59)).empty());
  auto gone = rc.expire(kNow + seconds(60));
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_EQ(gone[0], "mode enforce expired");
  EXPECT_TRUE(rc.empty());
  EXPECT_TRUE(rc.expire(kNow + seconds(61)).empty());
}

TEST(RuntimeChanges, PinWithoutDurationStaysUntilReset) {
  RuntimeChanges rc;
  ASSERT_TRUE(rc.apply({{"op", "pin"}, {"level", "high"}}, kNow));
  EXPECT_TRUE(rc.expire(kNow + std::chrono::hours(1000)).empty());
  auto o = rc.law_overrides(kNow, {});
  ASSERT_TRUE(o.level);
  EXPECT_EQ(o.level->level, law::Level::kHigh);
  EXPECT_FALSE(o.level->expires_at);
  auto r = rc.apply({{"op", "reset"}, {"what", "level"}}, kNow);
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, "level pin back to the config");
  EXPECT_FALSE(rc.law_overrides(kNow, {}).level);
  // Nothing to reset is done already (#52 row 8: a runbook's reset may run twice).
  auto again = rc.apply({{"op", "reset"}, {"what", "level"}}, kNow);
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, "no runtime level pin to reset: already the config's");
}

TEST(RuntimeChanges, RefusedRequestsChangeNothing) {
  RuntimeChanges rc;
  const std::vector<std::pair<json, std::string>> bad = {
      {{{"op", "mode"}, {"mode", "panic"}}, "mode"},
      {{{"op", "pin"}, {"level", "extreme"}}, "level"},
      {{{"op", "pin"}, {"level", "high"}, {"for_s", -5}}, "--for must be over 0"},
      {{{"op", "pin"}, {"level", "high"}, {"for_s", 30 * 24 * 3600}}, "at most 7 days"},
      {{{"op", "override"}, {"class", "normal"}}, "at least one"},
      {{{"op", "override"}, {"class", "normal"}, {"admit_fraction", 1.5}}, "0.0..1.0"},
      {{{"op", "override"}, {"class", "normal"}, {"inflight_cap", 0}}, "inflight_cap"},
      {{{"op", "override"}, {"class", "normal"}, {"burst", 5}}, "a burst needs a rate"},
      {{{"op", "override"}, {"class", "normal"}, {"burst", 0}}, "burst must be"},
      {{{"op", "override"}, {"class", "vip"}, {"inflight_cap", 5}}, "vip"},
      {{{"op", "port"}, {"port", 0}, {"class", "normal"}}, "1..65535"},
      {{{"op", "port"}, {"port", 70000}, {"class", "normal"}}, "1..65535"},
      {{{"op", "prefix"}, {"cidr", "192.0.2.1/24"}, {"class", "critical"}}, "192.0.2.1/24"},
      {{{"op", "action"}, {"action", "tarpit"}}, "drop or rst"},
      {{{"op", "reset"}, {"what", "everything"}}, "cannot reset"},
      {{{"op", "reset"}, {"what", "port"}, {"port", 70000}}, "1..65535"},
      {{{"op", "reset"}, {"what", "port:443"}}, "an earlier release's form"},
      {{{"op", "launch"}}, "unknown request"},
      {json::object(), "missing op"},
  };
  for (const auto& [request, words] : bad) {
    auto r = rc.apply(request, kNow);
    ASSERT_FALSE(r) << request.dump();
    EXPECT_NE(r.error().message.find(words), std::string::npos)
        << request.dump() << " -> " << r.error().message;
  }
  EXPECT_TRUE(rc.empty());
}

TEST(RuntimeChanges, ClassOverrideBecomesALawPin) {
  RuntimeChanges rc;
  auto r = rc.apply({{"op", "override"},
                     {"class", "background"},
                     {"admit_fraction", 0.25},
                     {"tokens_per_sec", 100},
                     {"for_s", 10}},
                    kNow);
  ASSERT_TRUE(r) << r.error().message;
  auto o = rc.law_overrides(kNow, {});
  const auto& pin = o.classes[law::index_of(law::TrafficClass::kBackground)];
  ASSERT_TRUE(pin);
  EXPECT_DOUBLE_EQ(*pin->admit_fraction, 0.25);
  EXPECT_EQ(*pin->tokens_per_sec, 100u);
  EXPECT_FALSE(pin->inflight_cap);
  EXPECT_FALSE(o.classes[law::index_of(law::TrafficClass::kNormal)]);
}

TEST(RuntimeChanges, PortsPrefixesAndActionEditTheConfig) {
  RuntimeChanges rc;
  ASSERT_TRUE(rc.apply({{"op", "port"}, {"port", 8080}, {"class", "background"}}, kNow));
  ASSERT_TRUE(rc.apply({{"op", "port-remove"}, {"port", 443}}, kNow));
  ASSERT_TRUE(rc.apply({{"op", "port"}, {"port", 80}, {"class", "critical"}}, kNow));
  ASSERT_TRUE(
      rc.apply({{"op", "prefix"}, {"cidr", "198.51.100.0/24"}, {"class", "background"}}, kNow));
  ASSERT_TRUE(rc.apply({{"op", "prefix-remove"}, {"cidr", "192.0.2.0/24"}}, kNow));
  ASSERT_TRUE(rc.apply({{"op", "action"}, {"action", "drop"}}, kNow));
  auto cfg = rc.applied_to(base_config());
  EXPECT_EQ(cfg.dataplane.action, config::Action::kDrop);
  std::map<uint16_t, law::TrafficClass> ports;
  for (const auto& p : cfg.ports) ports[p.port] = p.traffic_class;
  EXPECT_EQ(ports, (std::map<uint16_t, law::TrafficClass>{{80, law::TrafficClass::kCritical},
                                                          {8080, law::TrafficClass::kBackground}}));
  ASSERT_EQ(cfg.prefixes.size(), 1u);
  EXPECT_EQ(to_string(cfg.prefixes[0].prefix), "198.51.100.0/24");
  EXPECT_EQ(cfg.prefixes[0].traffic_class, law::TrafficClass::kBackground);

  // Reset of one port gives the config's entry back.
  ASSERT_TRUE(rc.apply({{"op", "reset"}, {"what", "port"}, {"port", 443}}, kNow));
  cfg = rc.applied_to(base_config());
  EXPECT_EQ(cfg.ports.size(), 3u);
}

TEST(RuntimeChanges, SurvivesARestartThroughJson) {
  RuntimeChanges rc;
  ASSERT_TRUE(rc.apply({{"op", "pin"}, {"level", "critical"}, {"for_s", 300}}, kNow));
  ASSERT_TRUE(rc.apply({{"op", "mode"}, {"mode", "off"}}, kNow));
  ASSERT_TRUE(rc.apply({{"op", "override"}, {"class", "normal"}, {"inflight_cap", 50}}, kNow));
  ASSERT_TRUE(rc.apply({{"op", "port-remove"}, {"port", 80}}, kNow));
  ASSERT_TRUE(rc.apply({{"op", "prefix"}, {"cidr", "2001:db8::/32"}, {"class", "critical"}}, kNow));

  auto back = RuntimeChanges::from_json(json::parse(rc.to_json().dump()));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->to_json(), rc.to_json());
  // The pin still ends when it would have: 300 s after it was made.
  EXPECT_TRUE(back->expire(kNow + seconds(299)).empty());
  EXPECT_EQ(back->expire(kNow + seconds(300)).size(), 1u);

  EXPECT_FALSE(RuntimeChanges::from_json(json::parse(R"({"level": {"level": "max"}})")));
  EXPECT_FALSE(RuntimeChanges::from_json(json::parse("[1, 2]")));
}

// Today's bug: `reset port:70000` cleared port 4464 (70000 mod 65536).
TEST(RuntimeChanges, AResetOfAPortOutOfRangeClearsNothing) {
  RuntimeChanges rc;
  ASSERT_TRUE(rc.apply({{"op", "port"}, {"port", 4464}, {"class", "critical"}}, kNow));
  EXPECT_FALSE(rc.apply({{"op", "reset"}, {"what", "port"}, {"port", 70000}}, kNow));
  EXPECT_FALSE(ipc::parse_reset_target("port:70000"));
  EXPECT_EQ(rc.describe(kNow).ports.size(), 1u);
  auto r = rc.apply(ipc::ResetRequest{ipc::ResetPort{4464}}, kNow);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, "port 4464 back to the config");
}

TEST(RuntimeChanges, ResetsOfOneClassPortOrPrefix) {
  RuntimeChanges rc;
  ASSERT_TRUE(rc.apply({{"op", "override"}, {"class", "background"}, {"inflight_cap", 5}}, kNow));
  ASSERT_TRUE(rc.apply({{"op", "prefix"}, {"cidr", "2001:db8::/32"}, {"class", "critical"}}, kNow));
  auto c = rc.apply({{"op", "reset"}, {"what", "class"}, {"class", "background"}}, kNow);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(*c, "override of class background back to the config");
  auto p = rc.apply({{"op", "reset"}, {"what", "prefix"}, {"cidr", "2001:db8::/32"}}, kNow);
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(*p, "prefix 2001:db8::/32 back to the config");
  EXPECT_TRUE(rc.empty());
  auto none = rc.apply({{"op", "reset"}, {"what", "port"}, {"port", 80}}, kNow);
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_EQ(*none, "no runtime port 80 to reset: already the config's");
}

// Each saved change is the request that makes it again, in the layout
// earlier releases wrote: a daemon restarted after an upgrade keeps them.
TEST(RuntimeChanges, SavedChangesAreTheRequestsInTheEarlierLayout) {
  const json earlier = json::parse(R"({
    "mode": {"mode": "observe", "until_ms": null},
    "action": {"action": "drop", "until_ms": 1767225600000},
    "level": {"level": "high", "until_ms": null},
    "classes": {"normal": {"inflight_cap": 50, "tokens_per_sec": 100, "burst": 10,
                           "until_ms": null}},
    "ports": {"80": null, "8080": "background"},
    "prefixes": {"2001:db8::/32": "critical", "192.0.2.0/24": null}})");
  auto saved = parse_saved_changes(earlier);
  ASSERT_TRUE(saved) << saved.error().message;
  ASSERT_EQ(saved->size(), 8u);
  const ipc::Request observe = ipc::ModeRequest{law::Mode::kObserve, std::nullopt};
  EXPECT_EQ((*saved)[0].request, observe);
  EXPECT_EQ((*saved)[1].until, WallTime(std::chrono::milliseconds(1767225600000)));
  EXPECT_EQ((*saved)[4].request, ipc::Request{ipc::PortRemoveRequest{80}});
  EXPECT_EQ(saved_changes_json(*saved), earlier);

  auto rc = RuntimeChanges::from_json(earlier);
  ASSERT_TRUE(rc) << rc.error().message;
  EXPECT_EQ(rc->saved(), *saved);
  EXPECT_EQ(rc->to_json(), earlier);
}

TEST(RuntimeChanges, ASavedChangeTheProtocolRefusesIsNamed) {
  auto bad = parse_saved_changes(json::parse(R"({"ports": {"70000": "normal"}})"));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "ports 70000: port must be in 1..65535");
  bad = parse_saved_changes(json::parse(R"({"ports": {"http": "normal"}})"));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "ports: 'http' is not a port");
  bad = parse_saved_changes(json::parse(R"({"classes": {"vip": {"inflight_cap": 5}}})"));
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("classes vip: "), std::string::npos) << bad.error().message;
}

TEST(RuntimeChanges, DescribeShowsWhatIsLeft) {
  RuntimeChanges rc;
  ASSERT_TRUE(rc.apply({{"op", "pin"}, {"level", "high"}, {"for_s", 120}}, kNow));
  auto d = rc.describe(kNow + seconds(20));
  ASSERT_TRUE(d.level);
  EXPECT_EQ(d.level->value, "high");
  ASSERT_TRUE(d.level->left_s);
  EXPECT_DOUBLE_EQ(*d.level->left_s, 100.0);
  ASSERT_TRUE(rc.apply({{"op", "reset"}}, kNow));
  EXPECT_TRUE(rc.describe(kNow).empty());
}

}  // namespace
}  // namespace edgeshed::daemon
