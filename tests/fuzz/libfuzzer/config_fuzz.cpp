// libFuzzer target: the daemon's configuration file (config::parse_config
// with the signal kinds' table), which a SIGHUP feeds whatever an operator
// saved, then the parameters of each signal, by its kind's `check` (what the
// daemon checks before it starts a source). Besides not
// crashing: an error is reported as "file:line:column: ..." on every line,
// as the README promises, and a parse is a pure function of the text.
#include <cstdint>
#include <string>
#include <string_view>

#include "config/config.h"
#include "fuzz_check.h"
#include "signals/signal_kinds.h"

namespace {

constexpr std::string_view kSource = "fuzz.toml";

void check_error_lines(const std::string& message) {
  FUZZ_CHECK(!message.empty(), "empty error message");
  std::string_view rest = message;
  while (!rest.empty()) {
    const std::string_view line = rest.substr(0, rest.find('\n'));
    FUZZ_CHECK(line.starts_with(std::string(kSource) + ":"), message);
    rest.remove_prefix(std::min(rest.size(), line.size() + 1));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto config = edgeshed::signals::parse_config(text, kSource);
  if (edgeshed::fuzz::purity_checked(text)) {
    auto again = edgeshed::signals::parse_config(text, kSource);
    FUZZ_CHECK(config.ok() == again.ok(), "two parses of the same text disagree");
    if (!config)
      FUZZ_CHECK(config.error().message == again.error().message, "two parses, two messages");
  }
  if (!config) {
    check_error_lines(config.error().message);
    return 0;
  }
  // What the daemon does next with a good config: the law's settings, and
  // each signal's parameters (no source is built: those start threads).
  (void)config->law_config();
  for (const auto& signal : config->signals) {
    const auto* kind = edgeshed::signals::find_signal_kind(signal.kind);
    FUZZ_CHECK(kind != nullptr, "a parsed signal of no kind: " + signal.kind);
    if (auto s = kind->check(signal); !s) check_error_lines(s.error().message);
  }
  return 0;
}
