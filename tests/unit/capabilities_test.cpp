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

TEST(Capabilities, AServiceInAnotherNamespaceNeedsSysAdminAndForAProcessPtrace) {
  constexpr int kSysPtrace = 19;
  const auto refused = [](uint64_t effective, bool by_process) {
    const auto s = check_namespace_capabilities(effective, by_process);
    return s ? std::string() : s.error().message;
  };
  EXPECT_EQ(refused(bit(kSysAdmin), false), "");
  EXPECT_EQ(refused(bit(kSysAdmin) | bit(kSysPtrace), true), "");
  EXPECT_EQ(refused(bit(kBpf) | bit(kNetAdmin) | bit(kPerfmon), false)
                .rfind("missing CAP_SYS_ADMIN: a port's service in another network namespace", 0),
            0U);
  EXPECT_EQ(refused(bit(kSysAdmin), true).rfind("missing CAP_SYS_PTRACE:", 0), 0U);
  EXPECT_EQ(refused(0, true).rfind("missing CAP_SYS_ADMIN, CAP_SYS_PTRACE:", 0), 0U);
}

}  // namespace
}  // namespace edgeshed
