// The netstat signal: /proc/net/netstat parsing on real-looking text and its
// malformed variants, and the per-second rate of one TcpExt counter.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/expect_refused.h"
#include "common/temp_file.h"
#include "config/config.h"
#include "signals/netstat_signal.h"
#include "signals/parse/netstat.h"
#include "signals/signal_kinds.h"
#include "unit/fixture_text.h"

namespace edgeshed::signals {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::fixture;
using testing::TempFile;

std::string tcp_ext(uint64_t overflows, uint64_t drops) {
  return "TcpExt: SyncookiesSent ListenOverflows ListenDrops TCPReqQFullDrop\n"
         "TcpExt: 0 " +
         std::to_string(overflows) + " " + std::to_string(drops) +
         " 0\n"
         "IpExt: InNoRoutes InOctets\n"
         "IpExt: 0 123456789\n";
}

TEST(NetstatParse, ReadsARealFile) {
  auto n = parse_netstat(fixture("netstat_6.18.txt"));
  ASSERT_TRUE(n) << n.error().message;
  EXPECT_EQ(n->sections.size(), 3u);  // TcpExt, IpExt, MPTcpExt
  EXPECT_EQ(n->sections.at("TcpExt").size(), 135u);
  EXPECT_EQ(find_counter(*n, "TcpExt", "ListenOverflows").value(), 12u);
  EXPECT_EQ(find_counter(*n, "TcpExt", "ListenDrops").value(), 15u);
  EXPECT_EQ(find_counter(*n, "TcpExt", "TCPReqQFullDrop").value(), 3u);
  EXPECT_EQ(find_counter(*n, "TcpExt", "TCPReqQFullDoCookies").value(), 0u);
  EXPECT_EQ(find_counter(*n, "TcpExt", "SyncookiesSent").value(), 7u);
  EXPECT_EQ(find_counter(*n, "IpExt", "InOctets").value(), 27312784u);
}

TEST(NetstatParse, ToleratesBlankLinesAndExtraSpacing) {
  auto n = parse_netstat("\nTcpExt:  A   B\t C\r\nTcpExt: 1 2 18446744073709551615\n\n");
  ASSERT_TRUE(n) << n.error().message;
  EXPECT_EQ(find_counter(*n, "TcpExt", "C").value(), 18446744073709551615u);
}

TEST(NetstatParse, RejectsMalformedTextNamingTheLine) {
  const std::pair<const char*, const char*> bad[] = {
      {"TcpExt: A B C\nTcpExt: 1 2\n", "line 2: TcpExt has 3 names but 2 values"},
      {"TcpExt: A B\nTcpExt: 1 2 3\n", "line 2: TcpExt has 2 names but 3 values"},
      {"TcpExt: A B\nTcpExt: 1 x\n", "line 2: TcpExt.B = 'x' is not a whole number"},
      {"TcpExt: A B\nTcpExt: 1 -2\n", "line 2: TcpExt.B = '-2' is not a whole number"},
      {"TcpExt: A B\nTcpExt: 1 99999999999999999999\n", "'99999999999999999999' is not a whole"},
      {"TcpExt: A B\nIpExt: 1 2\n", "line 2: expected the values of TcpExt, found 'IpExt:'"},
      {"TcpExt: A B\nTcpExt: 1 2\nIpExt: C\n", "line 3: IpExt names without a values line"},
      {"TcpExt: A A\nTcpExt: 1 2\n", "line 1: TcpExt.A appears twice"},
      {"TcpExt: A\nTcpExt: 1\nTcpExt: A\nTcpExt: 1\n", "line 3: section TcpExt appears twice"},
      {"garbage without colon\n", "line 1: expected '<Section>: ...', found 'garbage"},
  };
  testing::expect_refusals(bad, [](const char* text) { return parse_netstat(text); });
}

TEST(NetstatParse, MissingSectionOrCounterSaysSo) {
  auto only_ip = parse_netstat("IpExt: InNoRoutes\nIpExt: 0\n");
  ASSERT_TRUE(only_ip);
  auto none = find_counter(*only_ip, "TcpExt", "ListenDrops");
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().message, "no TcpExt section");

  auto n = parse_netstat(tcp_ext(1, 2));
  ASSERT_TRUE(n);
  auto typo = find_counter(*n, "TcpExt", "ListenDrop");
  ASSERT_FALSE(typo);
  EXPECT_EQ(typo.error().message,
            "TcpExt has no counter 'ListenDrop' (did you mean 'ListenDrops'?)");
  auto far = find_counter(*n, "TcpExt", "Bogus");
  ASSERT_FALSE(far);
  EXPECT_EQ(far.error().message, "TcpExt has no counter 'Bogus'");
}

// The signal's fast path reads what the full parse reads, and leaves every
// malformed pair to it (for the error).
TEST(NetstatParse, QuickCounterAgreesWithTheFullParse) {
  const std::string text = fixture("netstat_6.18.txt");
  auto n = parse_netstat(text);
  ASSERT_TRUE(n) << n.error().message;
  for (const auto& [name, value] : n->sections.at("TcpExt")) {
    EXPECT_EQ(quick_counter(text, "TcpExt", name), value) << name;
  }
  EXPECT_EQ(quick_counter(text, "IpExt", "InOctets"), 27312784u);
  EXPECT_EQ(quick_counter(text, "TcpExt", "ListenDrop"), std::nullopt);
  EXPECT_EQ(quick_counter(text, "Tcp", "ListenDrops"), std::nullopt);
  for (const char* bad :
       {"TcpExt: A B C\nTcpExt: 1 2\n", "TcpExt: A B\nTcpExt: 1 2 3\n",
        "TcpExt: A B\nTcpExt: 1 x\n", "TcpExt: A B\nTcpExt: 1 -2\n", "TcpExt: A B\nIpExt: 1 2\n",
        "TcpExt: A B\n", "TcpExt: A B\n\nTcpExt: 1 2\n"}) {
    EXPECT_EQ(quick_counter(bad, "TcpExt", "B"), std::nullopt) << bad;
  }
}

TEST(NetstatSignalSource, RatePerSecondSinceThePreviousSample) {
  TempFile f;
  f.write(tcp_ext(5, 100));
  NetstatSignal drops({f.path(), "ListenDrops"});
  auto first = drops.sample(seconds(10));
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(first->value, 0.0);  // nothing to compare with yet
  EXPECT_EQ(first->taken, seconds(10));

  f.write(tcp_ext(5, 130));
  auto second = drops.sample(seconds(10) + milliseconds(500));
  ASSERT_TRUE(second);
  EXPECT_DOUBLE_EQ(second->value, 60.0);  // 30 in half a second

  auto unchanged = drops.sample(seconds(11));
  ASSERT_TRUE(unchanged);
  EXPECT_DOUBLE_EQ(unchanged->value, 0.0);

  // A new network namespace starts from zero: no negative rate.
  f.write(tcp_ext(0, 4));
  auto reset = drops.sample(seconds(12));
  ASSERT_TRUE(reset);
  EXPECT_DOUBLE_EQ(reset->value, 0.0);
  f.write(tcp_ext(0, 8));
  EXPECT_DOUBLE_EQ(drops.sample(seconds(13))->value, 4.0);

  NetstatSignal overflows({f.path(), "ListenOverflows"});
  ASSERT_TRUE(overflows.sample(seconds(1)));
  f.write(tcp_ext(10, 8));
  EXPECT_DOUBLE_EQ(overflows.sample(seconds(3))->value, 5.0);
}

TEST(NetstatSignalSource, ReadsAtMostOncePerReadInterval) {
  TempFile f;
  f.write(tcp_ext(5, 100));
  NetstatSignal drops({f.path(), "ListenDrops", milliseconds(250)});
  ASSERT_TRUE(drops.sample(seconds(10)));
  f.write(tcp_ext(5, 150));
  // 100 ms later: the last reading, as taken then, without a read.
  auto cached = drops.sample(seconds(10) + milliseconds(100));
  ASSERT_TRUE(cached);
  EXPECT_EQ(cached->value, 0.0);
  EXPECT_EQ(cached->taken, seconds(10));
  // Once the interval is over, the rate is over the whole of it.
  auto next = drops.sample(seconds(10) + milliseconds(250));
  ASSERT_TRUE(next);
  EXPECT_DOUBLE_EQ(next->value, 200.0);  // 50 in a quarter of a second
  EXPECT_EQ(next->taken, seconds(10) + milliseconds(250));
}

TEST(NetstatSignalSource, AnUnknownCounterFailsEverySampleClearly) {
  TempFile f;
  f.write(tcp_ext(1, 2));
  NetstatSignal typo({f.path(), "ListenDrop"});
  auto s = typo.sample(seconds(1));
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().message,
            f.path() + ": TcpExt has no counter 'ListenDrop' (did you mean 'ListenDrops'?)");

  f.write("TcpExt: A\nTcpExt: x\n");
  auto bad = NetstatSignal({f.path(), "A"}).sample(seconds(1));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, f.path() + ": line 2: TcpExt.A = 'x' is not a whole number");

  auto missing = NetstatSignal({"/nonexistent/netstat", "A"}).sample(seconds(1));
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("cannot read /nonexistent/netstat"), std::string::npos);
}

TEST(NetstatSignalSource, ReadsTheRealProcFile) {
  if (!std::filesystem::exists("/proc/net/netstat")) GTEST_SKIP() << "no /proc/net/netstat";
  NetstatSignal drops({});
  auto s = drops.sample(seconds(1));
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->value, 0.0);
  auto again = drops.sample(seconds(2));
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_GE(again->value, 0.0);
}

TEST(NetstatConfig, DefaultsAndKeys) {
  auto cfg = signals::parse_config(
      "[[signal]]\nname = \"drops\"\nkind = \"netstat\"\ntarget = 10.0\n", "t.toml");
  ASSERT_TRUE(cfg) << cfg.error().message;
  auto defaults = netstat_options(cfg->signals[0]);
  ASSERT_TRUE(defaults) << defaults.error().message;
  EXPECT_EQ(defaults->counter, "ListenDrops");
  EXPECT_EQ(defaults->path, "/proc/net/netstat");

  cfg = signals::parse_config(
      "[[signal]]\nname = \"drops\"\nkind = \"netstat\"\ntarget = 10.0\n"
      "counter = \"TCPReqQFullDrop\"\npath = \"/proc/1/net/netstat\"\n",
      "t.toml");
  ASSERT_TRUE(cfg);
  auto set = netstat_options(cfg->signals[0]);
  ASSERT_TRUE(set) << set.error().message;
  EXPECT_EQ(set->counter, "TCPReqQFullDrop");
  EXPECT_EQ(set->path, "/proc/1/net/netstat");
  EXPECT_EQ(defaults->read_interval, kNetstatReadInterval);  // default stale_after 1 s

  // A stale_after shorter than the interval: read within half of it.
  cfg = signals::parse_config(
      "[daemon]\ntick = \"20ms\"\n[[signal]]\nname = \"drops\"\nkind = \"netstat\"\n"
      "target = 10.0\nstale_after = \"100ms\"\n",
      "t.toml");
  ASSERT_TRUE(cfg) << cfg.error().message;
  auto quick = netstat_options(cfg->signals[0]);
  ASSERT_TRUE(quick) << quick.error().message;
  EXPECT_EQ(quick->read_interval, milliseconds(50));

  cfg = signals::parse_config(
      "[[signal]]\nname = \"drops\"\nkind = \"netstat\"\ntarget = 10.0\n"
      "counter = \"Listen Drops\"\nprefix = \"TcpExt\"\n",
      "t.toml");
  ASSERT_TRUE(cfg);
  auto bad = netstat_options(cfg->signals[0]);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message,
            "t.toml:6:1: signal[0].prefix: unknown key for kind netstat (allowed: counter, path)\n"
            "t.toml:5:1: signal[0].counter = \"Listen Drops\": not a counter name (letters, "
            "digits and '_')");
}

}  // namespace
}  // namespace edgeshed::signals
