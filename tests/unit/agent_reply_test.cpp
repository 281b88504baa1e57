// The HAProxy agent-check line, from the snapshot the tick thread publishes.
#include "daemon/agent_reply.h"

#include <gtest/gtest.h>

namespace edgeshed::daemon {
namespace {

constexpr size_t kNormal = law::index_of(law::TrafficClass::kNormal);

MetricsSnapshot at(law::Level level, law::Mode mode = law::Mode::kEnforce) {
  MetricsSnapshot s;
  s.level = level;
  s.mode = mode;
  return s;
}

TEST(AgentReply, EachLevelSendsItsWeightAndReadyBelowCritical) {
  const config::AgentReplyConfig defaults;
  EXPECT_EQ(agent_reply(at(law::Level::kNormal), defaults), "100% ready maxconn:0\n");
  EXPECT_EQ(agent_reply(at(law::Level::kElevated), defaults), "60% ready maxconn:0\n");
  EXPECT_EQ(agent_reply(at(law::Level::kHigh), defaults), "25% ready maxconn:0\n");
  EXPECT_EQ(agent_reply(at(law::Level::kCritical), defaults), "0% drain maxconn:0\n");
}

TEST(AgentReply, ConfiguredWeights) {
  config::AgentReplyConfig c;
  c.weight_percent = {90, 70, 50, 10};
  EXPECT_EQ(agent_reply(at(law::Level::kHigh), c), "50% ready maxconn:0\n");
  EXPECT_EQ(agent_reply(at(law::Level::kCritical), c), "10% drain maxconn:0\n");
}

TEST(AgentReply, TheNormalClassCapIsSentAsMaxconnWhileEnforced) {
  MetricsSnapshot s = at(law::Level::kHigh);
  s.policies[kNormal].inflight_cap = 12;
  s.policies[law::index_of(law::TrafficClass::kBackground)].inflight_cap = 3;  // not this one
  EXPECT_EQ(agent_maxconn(s), 12u);
  EXPECT_EQ(agent_reply(s, {}), "25% ready maxconn:12\n");

  config::AgentReplyConfig quiet;
  quiet.send_maxconn = false;
  EXPECT_EQ(agent_reply(s, quiet), "25% ready\n");
}

TEST(AgentReply, NoMaxconnWhereTheDataPlaneDoesNotEnforceTheCap) {
  MetricsSnapshot s = at(law::Level::kNormal);
  s.policies[kNormal].inflight_cap = 12;
  s.mode = law::Mode::kObserve;
  EXPECT_EQ(agent_maxconn(s), 0u) << "observe: nothing is refused at the cap";
  s.mode = law::Mode::kOff;
  EXPECT_EQ(agent_maxconn(s), 0u);
  s.mode = law::Mode::kEnforce;
  s.fail_open = true;
  EXPECT_EQ(agent_maxconn(s), 0u) << "failing open: everything is admitted";
  s.fail_open = false;
  s.policies[kNormal].inflight_cap = law::kUnlimited;
  EXPECT_EQ(agent_maxconn(s), 0u);
}

TEST(AgentReply, ACapOfZeroIsNotHAProxysNoLimit) {
  MetricsSnapshot s = at(law::Level::kHigh);
  s.policies[kNormal].inflight_cap = 0;
  EXPECT_EQ(agent_maxconn(s), 1u);
}

TEST(AgentReply, TheLineIsOneLineOfHAProxyWords) {
  for (law::Level level : law::kAllLevels) {
    const std::string line = agent_reply(at(level), {});
    ASSERT_FALSE(line.empty());
    EXPECT_EQ(line.back(), '\n');
    EXPECT_EQ(line.find('\n'), line.size() - 1) << line;
    EXPECT_EQ(line.find('\r'), std::string::npos) << line;
  }
}

}  // namespace
}  // namespace edgeshed::daemon
