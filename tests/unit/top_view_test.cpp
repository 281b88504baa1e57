// The live view's formatting: sparklines and the frame around them.
#include "cli/top_view.h"

#include <gtest/gtest.h>

#include "cli/interface_status.h"
#include "cli/status_model.h"
#include "cli/status_summary.h"
#include "ipc/state.h"

namespace edgeshed {
namespace {

TEST(Sparkline, ScalesToTheLargestValueOrTheFloor) {
  EXPECT_EQ(sparkline({0, 1, 2, 3, 4, 5, 6, 7}, 8), "▁▂▃▄▅▆▇█");
  EXPECT_EQ(sparkline({1, 1}, 4, 2.0), "  ▅▅");  // half of the floor, padded left
  EXPECT_EQ(sparkline({0, 0, 0}, 3), "▁▁▁");
}

TEST(Sparkline, KeepsTheLastWidthValues) {
  std::deque<double> v;
  for (int i = 0; i < 100; ++i) v.push_back(i < 98 ? 0 : 10);
  EXPECT_EQ(sparkline(v, 4), "▁▁██");
}

TEST(Sparkline, IgnoresNonFiniteValues) {
  EXPECT_EQ(sparkline({std::numeric_limits<double>::quiet_NaN(), 4}, 2), "▁█");
}

nlohmann::ordered_json status_with(double pressure, double normal_shed) {
  InterfaceStatus iface;
  iface.iface = "eth0";
  iface.hook = "xdp";
  iface.mode = "enforce";
  iface.action = "rst";
  iface.draw = "random";
  iface.abi_version = EDGESHED_ABI_VERSION;
  iface.heartbeat_age_ms = 40;
  iface.rates = RatesStatus{};
  for (auto& k : iface.classes) {
    k.inflight = 1;
    k.connections = 3;
  }
  for (size_t c = 0; c < EDGESHED_NUM_CLASSES; ++c) {
    const double shed = c == EDGESHED_CLASS_NORMAL ? normal_shed : 0;
    auto& r = iface.rates->classes[c];
    r.admitted = 10.0;
    r.shed = shed;
    r.shed_cap = shed;
  }
  ipc::State state;
  state.pid = 1;
  state.config = "/etc/edgeshed.toml";
  state.monotonic_ms = 100000;
  state.level = "high";
  state.level_since_ms = 90000;
  state.pressure = pressure;
  state.drivers = {"accept_queue"};
  state.mode = "enforce";
  state.adaptive_limit = 37;
  auto daemon = ipc::to_json(state);
  daemon["state_age_ms"] = 50;
  return status_json(daemon, nlohmann::ordered_json::object(), {InterfaceReading{iface, {}, 0}});
}

TEST(TopView, FrameHasSparklinesAndTheStatus) {
  TopHistory h;
  for (int i = 0; i < 70; ++i) h.add(status_with(i < 60 ? 0.5 : 1.5, i < 65 ? 0 : 120));
  EXPECT_EQ(h.pressure().size(), TopHistory::kPoints);
  auto frame = top_frame(status_with(1.5, 120), h, "03:12:01", 1);
  ASSERT_GE(frame.size(), 10u);
  EXPECT_NE(frame[0].find("edgeshed top  03:12:01"), std::string::npos);
  EXPECT_NE(frame[2].find("last minute"), std::string::npos);
  EXPECT_NE(frame[3].find("pressure"), std::string::npos);
  EXPECT_NE(frame[3].find("now 1.50, max 1.50"), std::string::npos);
  EXPECT_NE(frame[5].find("shed/s normal"), std::string::npos);
  EXPECT_NE(frame[5].find("now 120/s"), std::string::npos);
  bool status_line = false;
  for (const auto& l : frame) status_line |= l.find("level high") != std::string::npos;
  EXPECT_TRUE(status_line);
}

// Columns on a terminal: a sparkline's block is 3 bytes of UTF-8 and one column.
size_t columns(const std::string& line) {
  size_t n = 0;
  for (unsigned char c : line) n += (c & 0xC0) != 0x80;
  return n;
}

// #52 row 10: status and top on one 80-column screen, shed and latency in it.
TEST(StatusSummary, FitsEightyColumnsWithTheLevelAndTheShedClasses) {
  TopHistory h;
  for (int i = 0; i < 70; ++i) h.add(status_with(1.5, 120));
  auto status = status_with(1.5, 120);
  status["interfaces"][0]["fail_open"] = true;
  status["interfaces"][0]["fail_open_reason"] =
      "no controller has ever published a heartbeat, and this reason is long enough to wrap";
  for (const auto& lines : {status_summary(status), top_frame(status, h, "03:12:01", 1)}) {
    bool level = false, table = false;
    for (const auto& l : lines) {
      EXPECT_LE(columns(l), kSummaryWidth) << l;
      level |= l.find("level high") != std::string::npos;
      table |= l.find("shed/s") != std::string::npos && l.find("admitted/s") != std::string::npos;
    }
    EXPECT_TRUE(level);
    EXPECT_TRUE(table);
  }
}

TEST(StatusSummary, WrapsAtSpacesWithAnIndent) {
  EXPECT_EQ(wrap("aaa bbb ccc", 8, "", "  "), (std::vector<std::string>{"aaa bbb", "  ccc"}));
  EXPECT_EQ(wrap("a-long-path x", 5, "", " "),
            (std::vector<std::string>{"a-long-path", " x"}));  // a word stays whole
}

TEST(TopView, SqueezesAMinuteIntoTheColumnsKeepingPeaks) {
  std::deque<double> v(60, 0.0);
  v[31] = 5;
  auto s = squeeze(v, 30);
  ASSERT_EQ(s.size(), 30u);
  EXPECT_EQ(s[15], 5);
  EXPECT_EQ(squeeze({1, 2}, 30), (std::deque<double>{1, 2}));
}

TEST(StatusLines, SayWhyTheDataPlaneFailsOpen) {
  auto s = status_with(1.0, 0);
  s["interfaces"][0]["fail_open"] = true;
  s["interfaces"][0]["fail_open_reason"] = "no controller heartbeat for 5000 ms";
  s["daemon"] = nullptr;
  auto lines = status_lines(s);
  EXPECT_NE(lines[0].find("daemon: not running"), std::string::npos);
  bool found = false;
  for (const auto& l : lines)
    found |=
        l.find("FAIL-OPEN: admitting everything: no controller heartbeat") != std::string::npos;
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace edgeshed
