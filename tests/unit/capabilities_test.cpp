// Who may attach: the refusal names what is missing. A real daemon as a
// dedicated user with exactly these capabilities is in
// tests/deploy/test_unit_capabilities.sh.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "dataplane/capabilities.h"

namespace edgeshed {
namespace {

constexpr uint64_t bit(int cap) { return uint64_t{1} << cap; }
constexpr int kNetAdmin = 12;
constexpr int kSysAdmin = 21;
constexpr int kPerfmon = 38;
constexpr int kBpf = 39;

std::string refusal(uint64_t effective) {
  const auto s = check_capabilities(effective);
  return s ? "" : s.error().message;
}

TEST(Capabilities, TheThreeAreEnoughWithoutRoot) {
  EXPECT_EQ(refusal(bit(kBpf) | bit(kNetAdmin) | bit(kPerfmon)), "");
}

TEST(Capabilities, SysAdminStandsInForBpfAndPerfmonAsOnOlderKernels) {
  EXPECT_EQ(refusal(bit(kSysAdmin) | bit(kNetAdmin)), "");
}

TEST(Capabilities, EachMissingOneIsNamed) {
  EXPECT_EQ(refusal(bit(kNetAdmin) | bit(kPerfmon)).rfind("missing CAP_BPF:", 0), 0U);
  EXPECT_EQ(refusal(bit(kBpf) | bit(kPerfmon)).rfind("missing CAP_NET_ADMIN:", 0), 0U);
  EXPECT_EQ(refusal(bit(kBpf) | bit(kNetAdmin)).rfind("missing CAP_PERFMON:", 0), 0U);
  const std::string none = refusal(0);
  EXPECT_EQ(none.rfind("missing CAP_BPF, CAP_NET_ADMIN, CAP_PERFMON:", 0), 0U) << none;
  EXPECT_NE(none.find("AmbientCapabilities="), std::string::npos) << none;
}

TEST(Capabilities, SysAdminDoesNotStandInForNetAdmin) {
  EXPECT_EQ(refusal(bit(kSysAdmin) | bit(kBpf) | bit(kPerfmon)).rfind("missing CAP_NET_ADMIN:", 0),
            0U);
}

}  // namespace
}  // namespace edgeshed
