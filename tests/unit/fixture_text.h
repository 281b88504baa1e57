// The unit tests' recorded inputs, in tests/unit/fixtures/.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace edgeshed::testing {

// The text of fixtures/NAME (empty when there is no such file).
inline std::string fixture(const std::string& name) {
  auto path = std::filesystem::path(__FILE__).parent_path() / "fixtures" / name;
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace edgeshed::testing
