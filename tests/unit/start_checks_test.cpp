// What the daemon refuses before it writes its run directory or touches the
// kernel: a config without an interface, without a port, or naming an
// interface this network namespace does not have (with file and line).
#include <gtest/gtest.h>

#include "config/config.h"
#include "daemon/start_checks.h"
#include "signals/signal_kinds.h"

namespace edgeshed::daemon {
namespace {

std::string refusal(const std::string& toml) {
  auto cfg = signals::parse_config(toml, "edge.toml");
  EXPECT_TRUE(cfg) << cfg.error().message;
  if (!cfg) return "";
  auto s = check_config_can_start(*cfg, "edge.toml");
  return s ? "" : s.error().message;
}

TEST(StartChecks, AConfigThatProtectsSomethingOnAnInterfaceHereStarts) {
  EXPECT_EQ(refusal("[[interface]]\nname = \"lo\"\n[[port]]\nport = 80\n"), "");
}

TEST(StartChecks, NoInterfaceIsRefusedWithWhatToAdd) {
  EXPECT_EQ(refusal("[[port]]\nport = 80\n").rfind("edge.toml: no [[interface]] configured", 0),
            0u);
}

TEST(StartChecks, NoPortIsRefusedWithWhatToAdd) {
  const auto why = refusal("[[interface]]\nname = \"lo\"\n");
  EXPECT_EQ(why.rfind("edge.toml: no [[port]] configured: nothing would be protected", 0), 0u)
      << why;
  EXPECT_NE(why.find("[[port]] port = 443"), std::string::npos) << why;
}

TEST(StartChecks, AnUnknownInterfaceIsRefusedWithFileAndLine) {
  const auto why = refusal("[[port]]\nport = 80\n[[interface]]\nname = \"es-nosuch0\"\n");
  EXPECT_EQ(why.rfind("edge.toml:4:8: interface[0].name = \"es-nosuch0\": no such interface", 0),
            0u)
      << why;
  EXPECT_NE(why.find("lo"), std::string::npos) << "lists the interfaces there are: " << why;
}

}  // namespace
}  // namespace edgeshed::daemon
