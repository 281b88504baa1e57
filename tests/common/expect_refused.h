// What a refusal must say: an input a parser refuses, or a config a builder
// refuses, fails with a message that holds the reason, not only fails.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <string_view>

namespace edgeshed::testing {

// parse refuses each input of bad (pairs of an input and a part of the
// message that must refuse it), with a message that holds its part.
template <class Cases, class Parse>
void expect_refusals(const Cases& bad, Parse parse) {
  for (const auto& [input, want] : bad) {
    auto r = parse(input);
    ASSERT_FALSE(r) << "accepted: " << input;
    EXPECT_NE(r.error().message.find(want), std::string::npos)
        << "input: " << input << "\nerror: " << r.error().message << "\nwanted: " << want;
  }
}

// r failed, with a message that holds each of wants.
template <class R>
void expect_refused(const R& r, std::initializer_list<std::string_view> wants) {
  ASSERT_FALSE(r);
  for (std::string_view want : wants) {
    EXPECT_NE(r.error().message.find(want), std::string::npos)
        << "error: " << r.error().message << "\nwanted: " << want;
  }
}

}  // namespace edgeshed::testing
