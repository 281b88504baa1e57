// libFuzzer target: the command line. The input, split at NUL bytes, is an
// argument vector after "edgeshed"; it is parsed by the real CLI tree and
// never run. Besides not crashing: a usage error is one line that names the
// --help to read, and a parse is a pure function of the arguments.
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/app.h"
#include "fuzz_check.h"

namespace {

// More arguments than any command takes; beyond it only time is spent.
constexpr size_t kMaxArgs = 64;

std::vector<std::string> split_args(std::string_view input) {
  std::vector<std::string> args{"edgeshed"};
  while (!input.empty() && args.size() <= kMaxArgs) {
    const size_t end = input.find('\0');
    args.emplace_back(input.substr(0, end));
    input.remove_prefix(end == std::string_view::npos ? input.size() : end + 1);
  }
  return args;
}

struct Outcome {
  int exit_code = 0;
  bool runs = false;  // parsed into a command to run
  std::string out, err;
};

Outcome parse(const std::vector<std::string>& args) {
  std::vector<const char*> argv;
  argv.reserve(args.size());
  for (const auto& a : args) argv.push_back(a.c_str());
  edgeshed::CliContext ctx;
  auto app = edgeshed::make_app(ctx);
  Outcome o;
  std::ostringstream out, err;
  try {
    app->parse(static_cast<int>(argv.size()), argv.data());
    o.runs = static_cast<bool>(ctx.run);
  } catch (const CLI::ParseError& e) {
    o.exit_code = app->exit(e, out, err);
  }
  o.out = out.str();
  o.err = err.str();
  return o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto args = split_args(input);
  const Outcome first = parse(args);
  // Building the CLI tree is nearly all of a parse (89% of this target's
  // time, measured): the check that builds it twice samples.
  if (edgeshed::fuzz::purity_checked(input)) {
    const Outcome second = parse(args);
    FUZZ_CHECK(
        first.exit_code == second.exit_code && first.runs == second.runs && first.err == second.err,
        "two parses of the same arguments disagree");
  }
  if (first.exit_code != 0) {
    // "edgeshed: <what> (see `edgeshed <command> --help`)\n", nothing else.
    const std::string& e = first.err;
    FUZZ_CHECK(e.starts_with("edgeshed: ") && e.ends_with("--help`)\n"), e);
    FUZZ_CHECK(e.find('\n') == e.size() - 1, e);
  }
  return 0;
}
