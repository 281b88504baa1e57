// The link-type check attach runs before anything is loaded. The refusal of
// a real tun device is in tests/netns/test_attach.sh.
#include <gtest/gtest.h>

#include <string>

#include "dataplane/link_type.h"

namespace edgeshed {
namespace {

TEST(LinkType, LoopbackCarriesEthernetHeadersToTheZeroAddress) {
  const auto mac = read_link_framing("lo");
  ASSERT_TRUE(mac) << mac.error().message;
  EXPECT_EQ(mac->framing, EDGESHED_FRAMING_ETHERNET);
  EXPECT_EQ(mac->mac, MacAddress{});
}

TEST(LinkType, AMissingInterfaceIsAnErrorThatNamesIt) {
  const auto s = read_link_framing("no-such-if0");
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("cannot read the link type of no-such-if0"), std::string::npos)
      << s.error().message;
}

TEST(LinkType, ANameTooLongForTheKernelIsRefusedBeforeAnyCall) {
  const auto s = read_link_framing(std::string(16, 'x'));
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("is not a valid name"), std::string::npos) << s.error().message;
}

}  // namespace
}  // namespace edgeshed
