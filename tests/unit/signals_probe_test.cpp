// The probe signal against loopback listeners: a quick success, a refused
// port, a listener whose accept queue is full, and a server that never
// answers.
#include <gtest/gtest.h>

#include <chrono>
#include <string_view>

#include "common/expect_refused.h"
#include "common/wait_until.h"
#include "config/config.h"
#include "signals/probe_signal.h"
#include "signals/signal_kinds.h"
#include "signals/signal_set.h"
#include "signals_test_server.h"

namespace edgeshed::signals {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using testing::TestHttpServer;
using testing::wait_until;

nanoseconds mono_now() { return std::chrono::steady_clock::now().time_since_epoch(); }

config::SignalConfig probe_config(const std::string& keys, const std::string& stale_after = "5s") {
  auto cfg = signals::parse_config(
      "[[signal]]\nname = \"probe\"\nkind = \"probe\"\ntarget = 0.05\n"
      "stale_after = \"" +
          stale_after + "\"\n" + keys,
      "t.toml");
  EXPECT_TRUE(cfg) << cfg.error().message;
  return cfg ? cfg->signals.at(0) : config::SignalConfig{};
}

std::unique_ptr<ProbeSignal> make_probe(const std::string& keys) {
  auto probe = make_probe_signal(probe_config(keys));
  EXPECT_TRUE(probe) << probe.error().message;
  return probe ? std::move(*probe) : nullptr;
}

std::string target(uint16_t port, const std::string& address = "127.0.0.1") {
  return "address = \"" + address + "\"\nport = " + std::to_string(port) + "\n";
}

// The sample of the first probe: its value, or the test fails.
double first_value(ProbeSignal& probe) {
  EXPECT_TRUE(wait_until([&] { return probe.probes() >= 1; }));
  auto s = probe.sample(mono_now());
  EXPECT_TRUE(s) << s.error().message;
  return s ? s->value : -1;
}

// The first probe failed, worth its timeout (timeout_s), and said what.
void expect_first_failed(ProbeSignal& probe, double timeout_s, std::string_view what) {
  EXPECT_DOUBLE_EQ(first_value(probe), timeout_s);
  EXPECT_EQ(probe.failures(), 1u);
  EXPECT_NE(probe.last_failure().find(what), std::string::npos) << probe.last_failure();
}

TEST(ProbeConfig, DefaultsAndEveryKey) {
  auto minimal = probe_options(probe_config(target(8080)));
  ASSERT_TRUE(minimal) << minimal.error().message;
  EXPECT_EQ(minimal->address.to_string(), "127.0.0.1:8080");
  EXPECT_FALSE(minimal->source);
  EXPECT_TRUE(minimal->http_path.empty());
  EXPECT_EQ(minimal->interval, std::chrono::seconds(1));
  EXPECT_EQ(minimal->timeout, std::chrono::seconds(1));

  auto full = probe_options(probe_config(target(443, "2001:db8::1") +
                                         "http_path = \"/health?deep=1\"\ninterval = \"250ms\"\n"
                                         "timeout = \"100ms\"\nsource = \"2001:db8::ff\"\n"));
  ASSERT_TRUE(full) << full.error().message;
  EXPECT_EQ(full->address.to_string(), "[2001:db8::1]:443");
  ASSERT_TRUE(full->source);
  EXPECT_EQ(full->source->ip(), "2001:db8::ff");
  EXPECT_EQ(full->http_path, "/health?deep=1");
  EXPECT_EQ(full->interval, milliseconds(250));
  EXPECT_EQ(full->timeout, milliseconds(100));
}

TEST(ProbeConfig, EveryBadKeyIsReportedWithItsLocation) {
  const std::pair<std::string, const char*> bad[] = {
      {"port = 80", "t.toml: signal[0].address: required for kind probe"},
      {"address = \"127.0.0.1\"", "signal[0].port: required for kind probe"},
      {target(0), "signal[0].port = 0: must be 1..65535"},
      {target(80, "localhost"),
       "t.toml:6:1: signal[0].address = \"localhost\": 'localhost' is not an IPv4 or IPv6 "
       "address (a literal: no name lookup)"},
      {target(80) + "source = \"::1\"", "signal[0].source = \"::1\": must be of the same family"},
      {target(80) + "source = \"me\"", "'me' is not an IPv4 or IPv6 address"},
      {target(80) + "http_path = \"health\"", "signal[0].http_path = \"health\": must start"},
      {target(80) + "timeout = \"2s\"", "signal[0].timeout = \"2s\": must not exceed interval"},
      {target(80) + "url = \"http://x/\"",
       "t.toml:8:1: signal[0].url: unknown key for kind probe (allowed: address, port, "
       "http_path, interval, timeout, source)"},
  };
  testing::expect_refusals(bad, [](const auto& keys) { return probe_options(probe_config(keys)); });
  auto stale = probe_options(probe_config(target(80), "1s"));
  ASSERT_FALSE(stale);
  EXPECT_NE(stale.error().message.find("must be at least interval + timeout (2s)"),
            std::string::npos)
      << stale.error().message;
}

TEST(ProbeConnect, SucceedsFastOnALoopbackListener) {
  TestHttpServer server([](const std::string&) { return TestHttpServer::ok("ok"); });
  auto probe = make_probe(target(server.port()) + "interval = \"1s\"\ntimeout = \"1s\"\n");
  double value = first_value(*probe);
  EXPECT_GE(value, 0.0);
  EXPECT_LT(value, 0.1);
  EXPECT_EQ(probe->failures(), 0u);
  EXPECT_TRUE(probe->last_failure().empty());
  EXPECT_TRUE(wait_until([&] { return server.connections() >= 1; }));
}

TEST(ProbeConnect, IPv6LoopbackAndABoundSource) {
  TestHttpServer server([](const std::string&) { return TestHttpServer::ok("ok"); },
                        /*ipv6=*/true);
  auto probe = make_probe(target(server.port(), "::1") + "source = \"::1\"\n");
  double value = first_value(*probe);
  EXPECT_LT(value, 0.1);
  EXPECT_EQ(probe->failures(), 0u) << probe->last_failure();
}

TEST(ProbeConnect, ARefusedPortIsAFailureWorthTheTimeout) {
  auto probe =
      make_probe(target(testing::closed_port()) + "interval = \"1s\"\ntimeout = \"300ms\"\n");
  expect_first_failed(*probe, 0.3, "Connection refused");
}

TEST(ProbeConnect, AFullAcceptQueueTimesOut) {
  testing::FullBacklogListener full;
  auto start = std::chrono::steady_clock::now();
  auto probe = make_probe(target(full.port()) + "interval = \"1s\"\ntimeout = \"150ms\"\n");
  EXPECT_DOUBLE_EQ(first_value(*probe), 0.15);
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(150));
  EXPECT_EQ(probe->failures(), 1u);
  EXPECT_NE(probe->last_failure().find("timed out after 150ms connecting to 127.0.0.1:"),
            std::string::npos)
      << probe->last_failure();
}

TEST(ProbeHttp, MeasuresConnectAndResponseOnANewConnectionEachTime) {
  std::string head;
  TestHttpServer server([&](const std::string& h) {
    head = h;
    auto r = TestHttpServer::ok("healthy");
    r.delay = milliseconds(30);
    return r;
  });
  auto probe = make_probe(target(server.port()) +
                          "http_path = \"/health\"\ninterval = \"100ms\"\ntimeout = \"100ms\"\n");
  ASSERT_TRUE(wait_until([&] { return probe->probes() >= 2; }));
  auto s = probe->sample(mono_now());
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_GE(s->value, 0.03);  // the server's delay is part of it
  EXPECT_LT(s->value, 0.1);
  EXPECT_EQ(probe->failures(), 0u) << probe->last_failure();
  EXPECT_GE(server.connections(), 2);  // no keep-alive: connecting is measured too
  EXPECT_NE(head.find("GET /health HTTP/1.1\r\n"), std::string::npos) << head;
  EXPECT_NE(head.find("Connection: close\r\n"), std::string::npos) << head;
}

TEST(ProbeHttp, AServerThatNeverAnswersTimesOut) {
  TestHttpServer server([](const std::string&) {
    TestHttpServer::Response r;
    r.never = true;
    return r;
  });
  auto probe = make_probe(target(server.port()) +
                          "http_path = \"/health\"\ninterval = \"1s\"\ntimeout = \"100ms\"\n");
  expect_first_failed(*probe, 0.1, "timed out after 100ms");
}

TEST(ProbeHttp, ANonSuccessAnswerIsAFailure) {
  TestHttpServer server(
      [](const std::string&) { return TestHttpServer::status(503, "Service Unavailable"); });
  auto probe = make_probe(target(server.port()) +
                          "http_path = \"/health\"\ninterval = \"1s\"\ntimeout = \"200ms\"\n");
  expect_first_failed(*probe, 0.2, "/health: HTTP 503 Service Unavailable");
}

TEST(ProbeSignalSet, BuiltFromConfigAndSampledWithoutWaiting) {
  TestHttpServer server([](const std::string&) { return TestHttpServer::ok("ok"); });
  auto cfg = signals::parse_config(
      "[[signal]]\nname = \"probe\"\nkind = \"probe\"\ntarget = 0.05\nstale_after = \"3s\"\n" +
          target(server.port()) + "http_path = \"/\"\n",
      "t.toml");
  ASSERT_TRUE(cfg) << cfg.error().message;
  auto set = SignalSet::build(cfg->signals, {});
  ASSERT_TRUE(set) << set.error().message;
  auto* probe = dynamic_cast<ProbeSignal*>(set->states()[0].source.get());
  ASSERT_NE(probe, nullptr);
  ASSERT_TRUE(wait_until([&] { return probe->probes() >= 1; }));
  auto r = set->sample(mono_now());
  EXPECT_FALSE(r[0].stale) << set->states()[0].last_error;
  EXPECT_LT(r[0].value, 0.05);
}

}  // namespace
}  // namespace edgeshed::signals
