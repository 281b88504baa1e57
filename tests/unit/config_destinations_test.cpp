// [dataplane] destinations: the prefixes decided besides the host's own.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/config.h"
#include "signals/signal_kinds.h"

namespace edgeshed::config {
namespace {

using ::testing::HasSubstr;

std::string error_of(std::string_view text) {
  Result<Config> config = signals::parse_config(text, "edgeshed.toml");
  if (config.ok()) {
    ADD_FAILURE() << "accepted:\n" << text;
    return "";
  }
  return config.error().message;
}

TEST(ConfigDestinationsTest, NoneByDefault) {
  auto config = signals::parse_config("", "edgeshed.toml");
  ASSERT_TRUE(config.ok());
  EXPECT_TRUE(config->dataplane.destinations.empty());
}

TEST(ConfigDestinationsTest, ReadsPrefixesOfBothFamilies) {
  auto config = signals::parse_config(
      "[dataplane]\ndestinations = [\"10.244.0.0/16\", \"192.0.2.7/32\", \"2001:db8::/32\"]\n",
      "edgeshed.toml");
  ASSERT_TRUE(config.ok()) << config.error().message;
  const auto& d = config->dataplane.destinations;
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(to_string(d[0]), "10.244.0.0/16");
  EXPECT_EQ(to_string(d[1]), "192.0.2.7/32");
  EXPECT_EQ(d[2].family, IpFamily::kV6);
  EXPECT_EQ(d[2].length, 32u);
}

TEST(ConfigDestinationsTest, RejectsWhatIsNoListOfPrefixes) {
  EXPECT_THAT(error_of("[dataplane]\ndestinations = \"10.0.0.0/8\"\n"),
              HasSubstr("dataplane.destinations = \"10.0.0.0/8\": must be an array of strings"));
  EXPECT_THAT(error_of("[dataplane]\ndestinations = [8]\n"),
              HasSubstr("must be an array of strings"));
  EXPECT_THAT(error_of("[dataplane]\ndestinations = [\"10.0.0.1/8\"]\n"),
              HasSubstr("\"10.0.0.1/8\": "));
  EXPECT_THAT(error_of("[dataplane]\ndestinations = [\"10.0.0.0/8\", \"10.0.0.0/8\"]\n"),
              HasSubstr("\"10.0.0.0/8\" is listed twice"));
}

}  // namespace
}  // namespace edgeshed::config
