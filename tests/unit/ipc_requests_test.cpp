// The control protocol: every request and reply survives its JSON, the
// wire format stays what daemons and CLIs of this version exchange, and
// what is not the protocol is refused with a message that says why.
#include "ipc/requests.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace edgeshed::ipc {
namespace {

using nlohmann::json;

IpPrefix prefix(const char* text) {
  auto p = parse_ip_prefix(text);
  EXPECT_TRUE(p) << text;
  return *p;
}

// One of each kind, with every optional field set and unset.
std::vector<Request> every_request() {
  return {
      PingRequest{},
      ModeRequest{law::Mode::kOff, std::nullopt},
      ModeRequest{law::Mode::kObserve, 600.0},
      ActionRequest{config::Action::kRst, std::nullopt},
      ActionRequest{config::Action::kDrop, 0.5},
      PinRequest{law::Level::kCritical, 3600.0},
      PinRequest{law::Level::kNormal, std::nullopt},
      OverrideRequest{law::TrafficClass::kBackground, 0.25, std::nullopt, std::nullopt,
                      std::nullopt, std::nullopt},
      OverrideRequest{law::TrafficClass::kCritical, std::nullopt, 50, 1000, 200, 60.0},
      PortRequest{8080, law::TrafficClass::kBackground},
      PortRemoveRequest{443},
      PrefixRequest{prefix("2001:db8::/32"), law::TrafficClass::kCritical},
      PrefixRemoveRequest{prefix("192.0.2.0/24")},
      ResetRequest{},
      ResetRequest{ResetGroup::kMode},
      ResetRequest{ResetClass{law::TrafficClass::kNormal}},
      ResetRequest{ResetPort{8080}},
      ResetRequest{ResetPrefix{prefix("2001:db8::/32")}},
  };
}

TEST(IpcRequests, EveryRequestSurvivesItsJson) {
  for (const auto& request : every_request()) {
    const json j = to_json(request);
    auto back = parse_request(j);
    ASSERT_TRUE(back) << j.dump() << " -> " << back.error().message;
    EXPECT_EQ(*back, request) << j.dump();
    EXPECT_EQ(to_json(*back), j);
    // Through text too, as it crosses the socket.
    auto again = parse_request(json::parse(j.dump()));
    ASSERT_TRUE(again) << j.dump();
    EXPECT_EQ(*again, request) << j.dump();
  }
}

TEST(IpcRequests, EachKindHasItsOwnOp) {
  std::vector<std::string> ops;
  for (const auto& request : every_request()) {
    const std::string op = op_of(request);
    EXPECT_EQ(to_json(request)["op"], op);
    if (ops.empty() || ops.back() != op) ops.push_back(op);
  }
  EXPECT_EQ(ops, (std::vector<std::string>{"ping", "mode", "action", "pin", "override", "port",
                                           "port-remove", "prefix", "prefix-remove", "reset"}));
}

// The wire format is what a daemon of this version expects: a CLI and a
// daemon of the same release must agree byte for byte on the names.
TEST(IpcRequests, TheWireFormatIsTheProtocols) {
  EXPECT_EQ(to_json(ModeRequest{law::Mode::kEnforce, 600.0}),
            json::parse(R"({"op": "mode", "mode": "enforce", "for_s": 600.0})"));
  EXPECT_EQ(to_json(ActionRequest{config::Action::kRst, std::nullopt}),
            json::parse(R"({"op": "action", "action": "rst"})"));
  EXPECT_EQ(to_json(PinRequest{law::Level::kHigh, std::nullopt}),
            json::parse(R"({"op": "pin", "level": "high"})"));
  EXPECT_EQ(to_json(OverrideRequest{law::TrafficClass::kNormal, std::nullopt, 5, 100, std::nullopt,
                                    std::nullopt}),
            json::parse(R"({"op": "override", "class": "normal", "inflight_cap": 5,
                            "tokens_per_sec": 100})"));
  EXPECT_EQ(to_json(PortRequest{80, law::TrafficClass::kCritical}),
            json::parse(R"({"op": "port", "port": 80, "class": "critical"})"));
  EXPECT_EQ(to_json(PortRemoveRequest{80}), json::parse(R"({"op": "port-remove", "port": 80})"));
  EXPECT_EQ(to_json(PrefixRequest{prefix("198.51.100.0/24"), law::TrafficClass::kBackground}),
            json::parse(R"({"op": "prefix", "cidr": "198.51.100.0/24", "class": "background"})"));
  EXPECT_EQ(to_json(PrefixRemoveRequest{prefix("198.51.100.0/24")}),
            json::parse(R"({"op": "prefix-remove", "cidr": "198.51.100.0/24"})"));
  EXPECT_EQ(to_json(ResetRequest{ResetGroup::kLevel}),
            json::parse(R"({"op": "reset", "what": "level"})"));
  EXPECT_EQ(to_json(ResetRequest{ResetClass{law::TrafficClass::kCritical}}),
            json::parse(R"({"op": "reset", "what": "class", "class": "critical"})"));
  EXPECT_EQ(to_json(ResetRequest{ResetPort{8080}}),
            json::parse(R"({"op": "reset", "what": "port", "port": 8080})"));
  EXPECT_EQ(to_json(ResetRequest{ResetPrefix{prefix("192.0.2.0/24")}}),
            json::parse(R"({"op": "reset", "what": "prefix", "cidr": "192.0.2.0/24"})"));
  EXPECT_EQ(to_json(PingRequest{}), json::parse(R"({"op": "ping"})"));
}

TEST(IpcRequests, AResetWithoutWhatResetsAll) {
  auto r = parse_request({{"op", "reset"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, Request{ResetRequest{ResetGroup::kAll}});
}

// The operator's words (`edgeshed reset port:8080`) become the typed target
// the wire carries, and back.
TEST(IpcRequests, TheResetWordsAreTypedTargets) {
  const std::vector<std::pair<std::string, ResetTarget>> good = {
      {"all", ResetGroup::kAll},
      {"mode", ResetGroup::kMode},
      {"action", ResetGroup::kAction},
      {"level", ResetGroup::kLevel},
      {"class:background", ResetClass{law::TrafficClass::kBackground}},
      {"port:1", ResetPort{1}},
      {"port:65535", ResetPort{65535}},
      {"prefix:2001:db8::/32", ResetPrefix{prefix("2001:db8::/32")}},
  };
  for (const auto& [words, target] : good) {
    auto t = parse_reset_target(words);
    ASSERT_TRUE(t) << words << ": " << t.error().message;
    EXPECT_EQ(*t, target) << words;
    EXPECT_EQ(to_string(*t), words);
    auto back = parse_request(to_json(ResetRequest{*t}));
    ASSERT_TRUE(back) << words;
    EXPECT_EQ(*back, Request{ResetRequest{target}}) << words;
  }
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"port:70000", "reset 'port:70000': the port must be in 1..65535"},
      {"port:0", "reset 'port:0': the port must be in 1..65535"},
      {"port:80x", "reset 'port:80x': the port must be in 1..65535"},
      {"class:vip", "reset 'class:vip': the class must be critical, normal or background"},
      {"prefix:192.0.2.1/24", "reset 'prefix:192.0.2.1/24': "},
      {"everything", "cannot reset 'everything': give all, mode, action, level"},
  };
  for (const auto& [words, message] : bad) {
    auto t = parse_reset_target(words);
    ASSERT_FALSE(t) << words;
    EXPECT_TRUE(t.error().message.starts_with(message)) << words << " -> " << t.error().message;
  }
}

TEST(IpcRequests, WhatIsNotTheProtocolIsRefusedWithAReason) {
  const std::vector<std::pair<json, std::string>> bad = {
      {json::array(), "not a JSON object"},
      {json::object(), "missing op"},
      {{{"op", 7}}, "missing op"},
      {{{"op", "launch"}}, "unknown request 'launch'"},
      {{{"op", "mode"}}, "missing mode"},
      {{{"op", "mode"}, {"mode", "panic"}}, "panic"},
      {{{"op", "mode"}, {"mode", "off"}, {"for_s", "soon"}}, "--for must be over 0"},
      {{{"op", "pin"}, {"level", "high"}, {"for_s", 0}}, "--for must be over 0"},
      {{{"op", "pin"}, {"level", "high"}, {"for_s", 8 * 24 * 3600}}, "at most 7 days"},
      {{{"op", "pin"}, {"level", 3}}, "missing level"},
      {{{"op", "action"}, {"action", "tarpit"}}, "drop or rst"},
      {{{"op", "override"}, {"inflight_cap", 5}}, "missing class"},
      {{{"op", "override"}, {"class", "normal"}}, "at least one"},
      {{{"op", "override"}, {"class", "normal"}, {"admit_fraction", -0.1}}, "0.0..1.0"},
      {{{"op", "override"}, {"class", "normal"}, {"inflight_cap", 2.5}}, "inflight_cap must be"},
      {{{"op", "override"}, {"class", "normal"}, {"tokens_per_sec", 2'000'000'000}},
       "tokens_per_sec must be"},
      {{{"op", "override"}, {"class", "normal"}, {"burst", 5}}, "a burst needs a rate"},
      {{{"op", "port"}, {"class", "normal"}}, "port must be in 1..65535"},
      {{{"op", "port"}, {"port", 80}}, "missing class"},
      {{{"op", "port-remove"}, {"port", 65536}}, "port must be in 1..65535"},
      {{{"op", "prefix"}, {"cidr", "192.0.2.1/24"}, {"class", "normal"}}, "192.0.2.1/24"},
      {{{"op", "prefix-remove"}}, "missing cidr"},
      {{{"op", "reset"}, {"what", "port"}, {"port", 70000}},
       "reset port: port must be in 1..65535"},
      {{{"op", "reset"}, {"what", "port"}}, "reset port: port must be in 1..65535"},
      {{{"op", "reset"}, {"what", "class"}, {"class", "vip"}}, "reset class: "},
      {{{"op", "reset"}, {"what", "prefix"}, {"cidr", "10.0.0.1/8"}}, "reset prefix: prefix"},
      {{{"op", "reset"}, {"what", "everything"}}, "cannot reset 'everything'"},
      {{{"op", "reset"}, {"what", 5}}, "missing what"},
      // The string form of earlier releases is refused, not guessed at.
      {{{"op", "reset"}, {"what", "port:8080"}}, "reset 'port:8080': an earlier release's form"},
  };
  for (const auto& [request, words] : bad) {
    auto r = parse_request(request);
    ASSERT_FALSE(r) << request.dump();
    EXPECT_NE(r.error().message.find(words), std::string::npos)
        << request.dump() << " -> " << r.error().message;
  }
}

TEST(IpcReplies, EveryReplySurvivesItsJson) {
  for (const auto& reply : {Reply::success("mode off until removed"),
                            Reply::success("class critical overridden", "raised to the floor"),
                            Reply::failure("no runtime mode to reset"), Reply::pong(4242)}) {
    const json j = to_json(reply);
    auto back = parse_reply(json::parse(j.dump()));
    ASSERT_TRUE(back) << j.dump() << " -> " << back.error().message;
    EXPECT_EQ(*back, reply) << j.dump();
  }
  EXPECT_EQ(to_json(Reply::success("done")), json::parse(R"({"ok": true, "message": "done"})"));
  EXPECT_EQ(to_json(Reply::failure("no")), json::parse(R"({"ok": false, "error": "no"})"));
  EXPECT_EQ(to_json(Reply::pong(7)), json::parse(R"({"ok": true, "pid": 7})"));
}

TEST(IpcReplies, WhatIsNotAReplyIsAnError) {
  const std::vector<std::pair<json, std::string>> bad = {
      {json("ok"), "not a JSON object"},
      {json::object(), "no \"ok\""},
      {{{"ok", "yes"}}, "no \"ok\""},
      {{{"ok", false}, {"error", 5}}, "\"error\" is not a string"},
      {{{"ok", true}, {"message", nullptr}}, "\"message\" is not a string"},
      {{{"ok", true}, {"pid", "4242"}}, "\"pid\" is not an integer"},
  };
  for (const auto& [reply, words] : bad) {
    auto r = parse_reply(reply);
    ASSERT_FALSE(r) << reply.dump();
    EXPECT_NE(r.error().message.find(words), std::string::npos)
        << reply.dump() << " -> " << r.error().message;
  }
}

}  // namespace
}  // namespace edgeshed::ipc
