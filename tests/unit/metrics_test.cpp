// The Prometheus exposition: every family has HELP and TYPE once, before
// its samples; names and labels follow the conventions; values are exact.
#include "daemon/metrics.h"
#include "signals/parse/prometheus_text.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

namespace edgeshed::daemon {
namespace {

MetricsSnapshot sample_snapshot() {
  MetricsSnapshot s;
  s.level = law::Level::kHigh;
  s.pressure = 1.42;
  s.mode = law::Mode::kEnforce;
  s.adaptive_limit = 37;
  s.policies[law::index_of(law::TrafficClass::kNormal)].inflight_cap = 37;
  s.policies[law::index_of(law::TrafficClass::kBackground)].admit_fraction = 0;
  s.inflight = {3, 37, 0};
  // The normal class's 37 requests in service are 20 ms old on average.
  s.inflight_age_ns = {0, 37 * 20'000'000ull, 0};
  s.policies[law::index_of(law::TrafficClass::kNormal)].queue_age = std::chrono::milliseconds(33);
  s.connections = {5, 412, 0};
  s.signals.push_back({"accept_queue", "accept_queue", 0.0284, 0.02, false, 0.08});
  s.signals.push_back({"memory \"psi\"", "psi", std::nullopt, 20, true, std::nullopt});
  s.port_namespaces.push_back({8080, "pid 4242", false});
  InterfaceMetric i{"eth0", {}};
  i.stats.cls[EDGESHED_CLASS_NORMAL][EDGESHED_CTR_SHED_FRAC] = 12345678901ull;
  i.stats.cls[EDGESHED_CLASS_NORMAL][EDGESHED_CTR_RST_SENT] = 7;
  i.stats.quic_cls[EDGESHED_CLASS_NORMAL][EDGESHED_CTR_SHED_FRAC] = 3;
  i.stats.global[EDGESHED_GCTR_EVENTS_LOST] = 2;
  s.interfaces.push_back(i);
  s.level_changes = 4;
  s.reloads_failed = 1;
  s.ticks.observe(0.0003);
  s.ticks.observe(0.002);
  s.ticks.observe(1.0);
  return s;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

TEST(Metrics, EveryFamilyHasHelpAndTypeBeforeItsSamples) {
  const auto text = render_metrics(sample_snapshot());
  std::map<std::string, std::string> types;
  std::set<std::string> helped;
  std::string current;
  const std::regex sample_re(R"(^([a-z_]+)(\{[^}]*\})? (\S+)$)");
  for (const auto& l : lines_of(text)) {
    std::smatch m;
    if (l.rfind("# HELP ", 0) == 0) {
      current = l.substr(7, l.find(' ', 7) - 7);
      EXPECT_TRUE(helped.insert(current).second) << "two HELP lines for " << current;
    } else if (l.rfind("# TYPE ", 0) == 0) {
      std::istringstream in(l.substr(7));
      std::string name, type;
      in >> name >> type;
      EXPECT_EQ(name, current);
      types[name] = type;
    } else {
      ASSERT_TRUE(std::regex_match(l, m, sample_re)) << l;
      std::string family = m[1];
      for (const char* suffix : {"_bucket", "_sum", "_count"}) {
        if (types[current] == "histogram" && family.ends_with(suffix)) {
          family.resize(family.size() - std::string(suffix).size());
        }
      }
      EXPECT_EQ(family, current) << "sample outside its family block: " << l;
      EXPECT_TRUE(family.rfind("edgeshed_", 0) == 0);
      if (types[current] == "counter") {
        EXPECT_TRUE(family.ends_with("_total")) << family;
      }
    }
  }
  for (const char* f :
       {"edgeshed_decisions_total", "edgeshed_rst_total", "edgeshed_packets_total",
        "edgeshed_pressure_level", "edgeshed_pressure", "edgeshed_signal_value",
        "edgeshed_signal_stale", "edgeshed_inflight", "edgeshed_inflight_age_seconds",
        "edgeshed_queue_gate_age_seconds", "edgeshed_connections", "edgeshed_limit",
        "edgeshed_level_changes_total", "edgeshed_tick_seconds", "edgeshed_build_info"}) {
    EXPECT_TRUE(types.count(f)) << f;
  }
  EXPECT_EQ(types["edgeshed_tick_seconds"], "histogram");
}

TEST(Metrics, ValuesAndLabels) {
  const auto text = render_metrics(sample_snapshot());
  auto has = [&](const std::string& line) {
    EXPECT_NE(text.find(line + "\n"), std::string::npos) << line;
  };
  has(R"(edgeshed_decisions_total{iface="eth0",protocol="tcp",class="normal",verdict="shed",reason="fraction"} 12345678901)");
  has(R"(edgeshed_decisions_total{iface="eth0",protocol="tcp",class="critical",verdict="admitted",reason="fail_open"} 0)");
  has(R"(edgeshed_decisions_total{iface="eth0",protocol="quic",class="normal",verdict="shed",reason="fraction"} 3)");
  EXPECT_EQ(text.find(R"(protocol="quic",class="normal",verdict="shed",reason="cap")"),
            std::string::npos)
      << "no in-flight cap applies to QUIC";
  has(R"(edgeshed_rst_total{iface="eth0",class="normal",result="sent"} 7)");
  has(R"(edgeshed_packets_total{iface="eth0",kind="events_lost"} 2)");
  has("edgeshed_pressure_level 2");
  has("edgeshed_pressure 1.42");
  has("edgeshed_mode 2");
  has(R"(edgeshed_signal_value{signal="accept_queue",kind="accept_queue"} 0.0284)");
  has(R"(edgeshed_signal_stale{signal="memory \"psi\""} 1)");
  has(R"(edgeshed_limit{class="normal"} 37)");
  has(R"(edgeshed_limit{class="critical"} +Inf)");
  has(R"(edgeshed_admit_fraction{class="background"} 0)");
  has(R"(edgeshed_inflight{class="normal"} 37)");
  has(R"(edgeshed_inflight_age_seconds{class="normal"} 0.02)");
  has(R"(edgeshed_inflight_age_seconds{class="critical"} 0)");
  has(R"(edgeshed_queue_gate_age_seconds{class="normal"} 0.033)");
  has(R"(edgeshed_queue_gate_age_seconds{class="background"} 0)");
  has(R"(edgeshed_connections{class="normal"} 412)");
  has(R"(edgeshed_port_netns_found{port="8080",netns="pid 4242"} 0)");
  has("edgeshed_level_changes_total 4");
  has(R"(edgeshed_config_reloads_total{result="failed"} 1)");
  has(R"(edgeshed_tick_seconds_bucket{le="0.0005"} 1)");
  has(R"(edgeshed_tick_seconds_bucket{le="0.0025"} 2)");
  has(R"(edgeshed_tick_seconds_bucket{le="+Inf"} 3)");
  has("edgeshed_tick_seconds_count 3");
  // A signal never sampled has no value sample, rather than a fake 0.
  EXPECT_EQ(text.find(R"(edgeshed_signal_value{signal="memory)"), std::string::npos);
}

// deploy/metrics.txt is what the alerts and the dashboard are checked
// against: the exposition must have exactly its families, types and labels.
TEST(Metrics, MatchesTheContractOfTheDeployFiles) {
  std::ifstream in(std::filesystem::path(__FILE__).parent_path() / ".." / ".." / "deploy" /
                   "metrics.txt");
  ASSERT_TRUE(in);
  struct Family {
    std::string type;
    std::map<std::string, std::set<std::string>> labels;  // empty set: any value
  };
  std::map<std::string, Family> contract;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string name;
    Family f;
    words >> name >> f.type;
    for (std::string label; words >> label;) {
      auto eq = label.find('=');
      std::set<std::string> values;
      if (eq != std::string::npos) {
        std::istringstream vs(label.substr(eq + 1));
        for (std::string v; std::getline(vs, v, '|');) values.insert(v);
      }
      f.labels[label.substr(0, eq)] = values;
    }
    contract[name] = f;
  }
  ASSERT_GE(contract.size(), 20u);

  const auto text = render_metrics(sample_snapshot());
  std::map<std::string, std::string> types;
  const std::regex sample_re(R"(^([a-z_]+)(?:\{([^}]*)\})? \S+$)");
  const std::regex label_re(R"re(([a-z_]+)="((?:[^"\\]|\\.)*)")re");
  for (const auto& l : lines_of(text)) {
    if (l.rfind("# TYPE ", 0) == 0) {
      std::istringstream w(l.substr(7));
      std::string name, type;
      w >> name >> type;
      types[name] = type;
      continue;
    }
    if (l[0] == '#') continue;
    std::smatch m;
    ASSERT_TRUE(std::regex_match(l, m, sample_re)) << l;
    std::string name = m[1];
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      const std::string base = name.substr(0, name.size() - std::string(suffix).size());
      if (name.ends_with(suffix) && contract.contains(base) && contract[base].type == "histogram") {
        name = base;
      }
    }
    ASSERT_TRUE(contract.contains(name)) << "not in deploy/metrics.txt: " << l;
    const std::string labels = m[2];
    for (auto it = std::sregex_iterator(labels.begin(), labels.end(), label_re);
         it != std::sregex_iterator(); ++it) {
      const std::string key = (*it)[1], value = (*it)[2];
      if (key == "le" && contract[name].type == "histogram") continue;
      ASSERT_TRUE(contract[name].labels.contains(key))
          << "label " << key << " not in the contract: " << l;
      const auto& allowed = contract[name].labels[key];
      EXPECT_TRUE(allowed.empty() || allowed.contains(value)) << "value " << value << ": " << l;
    }
  }
  for (const auto& [name, f] : contract) {
    ASSERT_TRUE(types.count(name)) << "contract metric not exported: " << name;
    EXPECT_EQ(types[name], f.type) << name;
  }
}

TEST(Metrics, LabelEscaping) {
  EXPECT_EQ(signals::escape_label_value("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
}

}  // namespace
}  // namespace edgeshed::daemon
