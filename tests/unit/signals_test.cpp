// Signal sources without a kernel: PSI parsing and math, file signals, and
// staleness in the signal set.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/expect_refused.h"
#include "common/temp_file.h"
#include "config/config.h"
#include "config/signal_table.h"
#include "signals/file_signal.h"
#include "signals/parse/psi.h"
#include "signals/psi_signal.h"
#include "signals/signal_kinds.h"
#include "signals/signal_set.h"

namespace edgeshed::signals {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;
using testing::TempFile;

TEST(PsiParse, SomeAndFull) {
  auto s = parse_psi(
      "some avg10=1.50 avg60=0.25 avg300=0.00 total=123456\n"
      "full avg10=0.75 avg60=0.00 avg300=0.00 total=999\n");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_DOUBLE_EQ(s->some.avg10, 1.5);
  EXPECT_DOUBLE_EQ(s->some.avg60, 0.25);
  EXPECT_EQ(s->some.total_us, 123456u);
  ASSERT_TRUE(s->full.has_value());
  EXPECT_DOUBLE_EQ(s->full->avg10, 0.75);
  EXPECT_EQ(s->full->total_us, 999u);
}

TEST(PsiParse, CpuWithoutFullLine) {
  auto s = parse_psi("some avg10=6.56 avg60=2.48 avg300=15.38 total=229361786\n");
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->full.has_value());
  EXPECT_EQ(s->some.total_us, 229361786u);
}

TEST(PsiParse, RejectsMalformedInputWithAReason) {
  const std::pair<const char*, const char*> bad[] = {
      {"", "no 'some' line"},
      {"some avg10=1.0 avg60=1.0 avg300=1.0\n", "expected avg10, avg60, avg300 and total"},
      {"some avg10=x avg60=1.0 avg300=1.0 total=1\n", "'x' is not a number"},
      {"some avg10=1 avg60=1 avg300=1 total=-5\n", "total '-5' is not a whole number"},
      {"half avg10=1 avg60=1 avg300=1 total=5\n", "expected 'some' or 'full'"},
      {"some avg10\n", "has no '='"},
      {"some\n", "has no fields"},
  };
  testing::expect_refusals(bad, [](const char* text) { return parse_psi(text); });
}

TEST(PsiMath, StallPercentOverTheTick) {
  // 25 ms stalled in a 100 ms tick.
  EXPECT_DOUBLE_EQ(PsiSignal::stall_percent(125000, 100000, milliseconds(100)), 25.0);
  EXPECT_DOUBLE_EQ(PsiSignal::stall_percent(100000, 100000, milliseconds(100)), 0.0);
  // Several stalled tasks can exceed wall time; it is a share, so clamp.
  EXPECT_DOUBLE_EQ(PsiSignal::stall_percent(500000, 0, milliseconds(100)), 100.0);
  EXPECT_DOUBLE_EQ(PsiSignal::stall_percent(5, 10, milliseconds(100)), 0.0);  // counter reset
  EXPECT_DOUBLE_EQ(PsiSignal::stall_percent(5, 0, nanoseconds(0)), 0.0);
}

TEST(PsiSignalSource, FirstSampleIsAvg10ThenTheTickShare) {
  TempFile f;
  f.write(
      "some avg10=3.00 avg60=0 avg300=0 total=1000000\nfull avg10=1 avg60=0 avg300=0 total=0\n");
  PsiSignal psi(f.path(), PsiSignal::Line::kSome, PsiSignal::Measure::kTick);
  auto first = psi.sample(seconds(10));
  ASSERT_TRUE(first);
  EXPECT_DOUBLE_EQ(first->value, 3.0);
  f.write(
      "some avg10=3.00 avg60=0 avg300=0 total=1050000\nfull avg10=1 avg60=0 avg300=0 total=0\n");
  auto second = psi.sample(seconds(10) + milliseconds(100));
  ASSERT_TRUE(second);
  EXPECT_DOUBLE_EQ(second->value, 50.0);
}

TEST(PsiSignalSource, MissingFileSaysPsiMayBeDisabled) {
  PsiSignal psi("/nonexistent/pressure/memory", PsiSignal::Line::kSome, PsiSignal::Measure::kTick);
  auto s = psi.sample(seconds(1));
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("PSI disabled?"), std::string::npos) << s.error().message;
}

TEST(FileSignalSource, ReadsOneNumber) {
  TempFile f;
  f.write("12.5\n");
  FileSignal sig(f.path());
  auto s = sig.sample(seconds(3));
  ASSERT_TRUE(s);
  EXPECT_DOUBLE_EQ(s->value, 12.5);
  EXPECT_EQ(s->taken, seconds(3));
}

TEST(FileSignalSource, RejectsWhatIsNotANumber) {
  TempFile f;
  for (const char* text : {"", "abc", "12 apples", "nan", "1e999"}) {
    f.write(text);
    auto s = FileSignal(f.path()).sample(seconds(1));
    EXPECT_FALSE(s) << "'" << text << "' accepted";
  }
  EXPECT_FALSE(FileSignal("/nonexistent/value").sample(seconds(1)));
}

TEST(SignalSetStaleness, ASourceThatStopsGoesStaleAfterItsAge) {
  TempFile f;
  f.write("4\n");
  config::SignalConfig cfg;
  cfg.name = "injected";
  cfg.kind = "file";
  cfg.target = 2.0;
  cfg.stale_after = seconds(1);
  cfg.params = config::make_signal_table(toml::table{{"path", f.path()}});
  auto set = SignalSet::build({cfg}, {});
  ASSERT_TRUE(set) << set.error().message;

  auto r = set->sample(seconds(100));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_FALSE(r[0].stale);
  EXPECT_DOUBLE_EQ(r[0].value, 4.0);
  EXPECT_DOUBLE_EQ(r[0].target, 2.0);

  f.write("garbage");
  r = set->sample(seconds(100) + milliseconds(900));
  EXPECT_FALSE(r[0].stale);  // last good value, still young
  EXPECT_DOUBLE_EQ(r[0].value, 4.0);
  EXPECT_FALSE(set->states()[0].last_error.empty());

  r = set->sample(seconds(101) + milliseconds(100));
  EXPECT_TRUE(r[0].stale);

  f.write("1");
  r = set->sample(seconds(102));
  EXPECT_FALSE(r[0].stale);
  EXPECT_DOUBLE_EQ(r[0].value, 1.0);
  EXPECT_TRUE(set->states()[0].last_error.empty());
}

TEST(SignalSetStaleness, NeverSampledIsStale) {
  config::SignalConfig cfg;
  cfg.name = "missing";
  cfg.kind = "file";
  cfg.params = config::make_signal_table(toml::table{{"path", "/nonexistent/file"}});
  auto set = SignalSet::build({cfg}, {});
  ASSERT_TRUE(set);
  EXPECT_TRUE(set->sample(seconds(5))[0].stale);
}

TEST(SignalSetBuild, PsiKeysAreValidated) {
  auto cfg = signals::parse_config(R"(
[[signal]]
name = "mem"
kind = "psi"
target = 10.0
resource = "disk"
)",
                                   "t.toml");
  ASSERT_TRUE(cfg) << cfg.error().message;
  testing::expect_refused(SignalSet::build(cfg->signals, {}), {"t.toml:", "resource"});
}

// The file and synthetic kinds check their keys as every kind does: when
// the source is made.
std::string build_error(std::string_view text) {
  auto cfg = signals::parse_config(text, "t.toml");
  if (!cfg) return "parse: " + cfg.error().message;
  auto set = SignalSet::build(cfg->signals, {});
  return set ? "built" : set.error().message;
}

TEST(SignalSetBuild, FileSignalNeedsAPath) {
  EXPECT_EQ(build_error("[[signal]]\nname = \"f\"\nkind = \"file\"\ntarget = 1\n"),
            "t.toml: signal[0].path: required for kind file");
  EXPECT_EQ(build_error("[[signal]]\nname = \"f\"\nkind = \"file\"\ntarget = 1\npath = \"\"\n"),
            "t.toml:5:1: signal[0].path = \"\": must not be empty");
}

TEST(SignalSetBuild, FileSignalTakesNoOtherKey) {
  EXPECT_EQ(build_error(
                "[[signal]]\nname = \"f\"\nkind = \"file\"\ntarget = 1\npath = \"/x\"\npth = 1\n"),
            "t.toml:6:1: signal[0].pth: unknown key for kind file (allowed: path)");
}

TEST(SignalSetBuild, SyntheticValueMustBeAFiniteNumber) {
  EXPECT_EQ(
      build_error("[[signal]]\nname = \"s\"\nkind = \"synthetic\"\ntarget = 1\nvalue = \"x\"\n"),
      "t.toml:5:1: signal[0].value = \"x\": must be a number");
  EXPECT_EQ(
      build_error("[[signal]]\nname = \"s\"\nkind = \"synthetic\"\ntarget = 1\nvalue = nan\n"),
      "t.toml:5:1: signal[0].value = nan: must be a finite number");
  EXPECT_EQ(
      build_error("[[signal]]\nname = \"s\"\nkind = \"synthetic\"\ntarget = 1\nvalue = -2.5\n"),
      "built");
}

// The example config is what operators copy: every signal in it must build.
TEST(SignalSetBuild, EverySignalOfTheExampleConfigBuilds) {
  auto path =
      std::filesystem::path(__FILE__).parent_path() / ".." / ".." / "examples" / "edgeshed.toml";
  auto cfg = signals::load_config(path.string());
  ASSERT_TRUE(cfg) << cfg.error().message;
  auto set = SignalSet::build(cfg->signals, {});
  ASSERT_TRUE(set) << set.error().message;
  EXPECT_EQ(set->states().size(), cfg->signals.size());
}

TEST(SignalSetBuild, InflightReadsThroughTheDataplaneReader) {
  config::SignalConfig cfg;
  cfg.name = "established";
  cfg.kind = "inflight";
  cfg.target = 10;
  SignalSet::DataplaneReaders readers;
  readers.inflight_total = [] { return Result<double>(7.0); };
  auto set = SignalSet::build({cfg}, readers);
  ASSERT_TRUE(set);
  auto r = set->sample(seconds(1));
  EXPECT_DOUBLE_EQ(r[0].value, 7.0);
  EXPECT_FALSE(r[0].stale);
}

}  // namespace
}  // namespace edgeshed::signals
