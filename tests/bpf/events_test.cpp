// Sampled shed events: what a shed SYN writes to the ring buffer, and the
// budget that keeps a flood from becoming an event flood.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <bpf/libbpf.h>
#include <fcntl.h>

#include <vector>

#include "bpf/dataplane_fixture.h"
#include "dataplane/events.h"
#include "edgeshed.skel.h"

namespace edgeshed::testing {
namespace {

std::string client(int i) { return "198.51.100." + std::to_string(i % 250 + 1); }

class EventsTest : public ::testing::TestWithParam<Entry> {
 protected:
  void SetUp() override {
    int fd = fcntl(bpf_map__fd(dp_.skeleton()->maps.es_events), F_DUPFD_CLOEXEC, 0);
    auto reader =
        EventReader::from_fd(Fd(fd), [this](const edgeshed_event& ev) { events_.push_back(ev); });
    ASSERT_TRUE(reader) << reader.error().message;
    reader_.emplace(std::move(*reader));
  }

  void configure(uint32_t mode, uint32_t action, uint32_t per_sec, uint32_t sample = 1) {
    auto cfg = dp_.config();
    cfg.mode = mode;
    cfg.action = action;
    cfg.events_per_sec_per_cpu = per_sec;
    cfg.event_sample = sample;
    dp_.set_config(cfg);
  }

  Verdict syn(const std::string& src, uint16_t sport = 40000, uint16_t dport = kNormalPort) {
    return dp_.run(GetParam(), PacketBuilder::syn_v4(sport, dport, src).build()).verdict;
  }

  std::vector<edgeshed_event> drain() {
    events_.clear();
    EXPECT_TRUE(reader_->poll(std::chrono::milliseconds(0)));
    return events_;
  }

  DataplaneFixture dp_;
  std::optional<EventReader> reader_;
  std::vector<edgeshed_event> events_;
};

TEST_P(EventsTest, ShedSynWritesWhoWhereAndWhy) {
  configure(EDGESHED_MODE_ENFORCE, EDGESHED_ACTION_DROP, 100);
  dp_.set_class_policy(EDGESHED_CLASS_NORMAL, kShedAll);
  ASSERT_EQ(syn("198.51.100.7", 41234), Verdict::kDrop);
  auto evs = drain();
  ASSERT_EQ(evs.size(), 1u);
  const auto& ev = evs[0];
  in_addr want{};
  inet_pton(AF_INET, "198.51.100.7", &want);
  EXPECT_EQ(ev.family, AF_INET);
  EXPECT_EQ(0, memcmp(ev.saddr, &want, 4));
  EXPECT_EQ(ev.sport, 41234);
  EXPECT_EQ(ev.dport, kNormalPort);
  EXPECT_EQ(ev.class_id, EDGESHED_CLASS_NORMAL);
  EXPECT_EQ(ev.reason, EDGESHED_REASON_FRAC);
  EXPECT_EQ(ev.outcome, EDGESHED_EVENT_DROP);
  EXPECT_GT(ev.ktime_ns, 0u);
}

TEST_P(EventsTest, OutcomesFollowModeActionAndRstBudget) {
  dp_.set_class_policy(EDGESHED_CLASS_NORMAL, {0, 1, 0, 0, 0, 0});
  dp_.set_inflight(EDGESHED_CLASS_NORMAL, 1);
  configure(EDGESHED_MODE_OBSERVE, EDGESHED_ACTION_RST, 100);
  ASSERT_EQ(syn("198.51.100.7"), Verdict::kPass);
  auto cfg = dp_.config();
  cfg.rst_per_sec_per_cpu = 1;
  dp_.set_config(cfg);
  configure(EDGESHED_MODE_ENFORCE, EDGESHED_ACTION_RST, 100);
  ASSERT_EQ(syn("198.51.100.7"), Verdict::kTx);
  ASSERT_EQ(syn("198.51.100.7"), Verdict::kDrop);  // RST budget spent
  auto evs = drain();
  ASSERT_EQ(evs.size(), 3u);
  EXPECT_EQ(evs[0].outcome, EDGESHED_EVENT_WOULD_SHED);
  EXPECT_EQ(evs[1].outcome, EDGESHED_EVENT_RST);
  EXPECT_EQ(evs[2].outcome, EDGESHED_EVENT_RST_CAPPED);
  for (const auto& ev : evs) EXPECT_EQ(ev.reason, EDGESHED_REASON_CAP);
}

TEST_P(EventsTest, AdmittedSynsWriteNothing) {
  configure(EDGESHED_MODE_ENFORCE, EDGESHED_ACTION_DROP, 100);
  for (int i = 0; i < 10; ++i) ASSERT_EQ(syn(client(i)), Verdict::kPass);
  EXPECT_TRUE(drain().empty());
}

TEST_P(EventsTest, BudgetPerCpuAndSecondBoundsAFlood) {
  configure(EDGESHED_MODE_ENFORCE, EDGESHED_ACTION_DROP, 5);
  dp_.set_class_policy(EDGESHED_CLASS_NORMAL, kShedAll);
  for (int i = 0; i < 200; ++i) ASSERT_EQ(syn(client(i)), Verdict::kDrop);
  EXPECT_EQ(drain().size(), 5u);
  EXPECT_EQ(dp_.stats().cls[EDGESHED_CLASS_NORMAL][EDGESHED_CTR_SHED_FRAC], 200u);
}

TEST_P(EventsTest, ZeroBudgetDisablesEvents) {
  configure(EDGESHED_MODE_ENFORCE, EDGESHED_ACTION_DROP, 0);
  dp_.set_class_policy(EDGESHED_CLASS_NORMAL, kShedAll);
  for (int i = 0; i < 10; ++i) ASSERT_EQ(syn(client(i)), Verdict::kDrop);
  EXPECT_TRUE(drain().empty());
}

TEST_P(EventsTest, SamplingKeepsAboutOneInN) {
  configure(EDGESHED_MODE_ENFORCE, EDGESHED_ACTION_DROP, 1000000, 10);
  dp_.set_class_policy(EDGESHED_CLASS_NORMAL, kShedAll);
  constexpr int kSyns = 4000;
  for (int i = 0; i < kSyns; ++i) ASSERT_EQ(syn(client(i)), Verdict::kDrop);
  // Binomial(4000, 0.1): mean 400, sd 19; 250..550 is ~8 sd each side.
  auto n = drain().size();
  EXPECT_GT(n, 250u);
  EXPECT_LT(n, 550u);
}

INSTANTIATE_TEST_SUITE_P(Entries, EventsTest, ::testing::Values(Entry::kXdp, Entry::kTc),
                         entry_name);

}  // namespace
}  // namespace edgeshed::testing
