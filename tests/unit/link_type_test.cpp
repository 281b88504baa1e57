// The link-type check attach runs before anything is loaded. The refusal of
// a real tun device is in tests/netns/test_attach.sh.
#include <gtest/gtest.h>

#include <string>

#include "dataplane/link_type.h"

namespace edgeshed {
namespace {

TEST(LinkType, LoopbackCarriesEthernetHeaders) {
  const Status s = require_ethernet_framing("lo");
  EXPECT_TRUE(s) << s.error().message;
}

TEST(LinkType, AMissingInterfaceIsAnErrorThatNamesIt) {
  const Status s = require_ethernet_framing("no-such-if0");
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("cannot read the link type of no-such-if0"), std::string::npos)
      << s.error().message;
}

TEST(LinkType, ANameTooLongForTheKernelIsRefusedBeforeAnyCall) {
  const Status s = require_ethernet_framing(std::string(16, 'x'));
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("is not a valid name"), std::string::npos) << s.error().message;
}

}  // namespace
}  // namespace edgeshed
