// The command line: usage errors (exit 2, one line naming the fix), runtime
// errors (exit 1), help everywhere, and the generated completion script.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/app.h"

namespace edgeshed {
namespace {

struct Outcome {
  int code;
  std::string out, err;
};

Outcome run(std::vector<std::string> args) {
  args.insert(args.begin(), "edgeshed");
  std::vector<const char*> argv;
  argv.reserve(args.size());
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  auto* old_out = std::cout.rdbuf(out.rdbuf());
  auto* old_err = std::cerr.rdbuf(err.rdbuf());
  int code = run_cli(static_cast<int>(argv.size()), argv.data());
  std::cout.rdbuf(old_out);
  std::cerr.rdbuf(old_err);
  return {code, out.str(), err.str()};
}

std::vector<std::vector<std::string>> all_command_paths() {
  CliContext ctx;
  auto app = make_app(ctx);
  std::vector<std::vector<std::string>> out;
  std::function<void(const CLI::App&, const std::vector<std::string>&)> walk =
      [&](const CLI::App& a, const std::vector<std::string>& path) {
        out.push_back(path);
        for (const CLI::App* s : a.get_subcommands({})) {
          auto p = path;
          p.push_back(s->get_name());
          walk(*s, p);
        }
      };
  walk(*app, {});
  return out;
}

// What a shell command prints; it must exit 0.
std::string bash_output(const std::string& command) {
  // NOLINTNEXTLINE(cert-env33-c): running the completion script in bash is the test
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return "popen failed";
  char buf[256];
  std::string got;
  while (fgets(buf, sizeof(buf), p)) got += buf;
  EXPECT_EQ(pclose(p), 0) << command;
  return got;
}

// What the completion script offers for each command line typed so far
// (the last word is the one completed), one line each, in a folder that
// holds the script and a file edge.toml.
std::string completions(const std::vector<std::string>& typed) {
  auto o = run({"completion", "bash"});
  EXPECT_EQ(o.code, 0) << o.err;
  const auto dir =
      std::filesystem::temp_directory_path() / ("edgeshed-completion-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "script.bash") << o.out;
  std::ofstream(dir / "edge.toml") << "";
  std::string probe = "cd " + dir.string() +
                      " && bash -c 'source script.bash; c() { COMP_WORDS=(\"$@\"); "
                      "COMP_CWORD=$((${#COMP_WORDS[@]}-1)); COMPREPLY=(); _edgeshed; "
                      "echo \"${COMPREPLY[*]}\"; }";
  for (const auto& t : typed) probe += "; c " + t;
  probe += "'";
  std::string got = bash_output(probe);
  std::filesystem::remove_all(dir);
  return got;
}

// Found by the cli_args fuzzer: an argument with a newline made the
// message two lines; an escape sequence could have driven the terminal.
TEST(Cli, ControlCharactersOfAnArgumentAreEscapedInTheError) {
  auto o = run({"status", "eth0\nFAKE: all good", "\x1b[2J"});
  EXPECT_EQ(o.code, 2);
  EXPECT_EQ(o.err.find('\n'), o.err.size() - 1) << o.err;
  EXPECT_EQ(o.err.find('\x1b'), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("eth0\\nFAKE: all good"), std::string::npos) << o.err;
}

// Found by the cli_args fuzzer: the completion command's argument was
// written into freed memory (AddressSanitizer: heap-use-after-free).
TEST(Cli, CompletionParsesItsShellArgument) {
  auto o = run({"completion", "bash"});
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("complete -F _edgeshed edgeshed"), std::string::npos);
}

TEST(Cli, HelpOnEverySubcommand) {
  auto paths = all_command_paths();
  EXPECT_GE(paths.size(), 20u);
  for (auto path : paths) {
    path.emplace_back("--help");
    auto o = run(path);
    EXPECT_EQ(o.code, 0) << testing::PrintToString(path);
    EXPECT_NE(o.out.find("Usage:"), std::string::npos) << testing::PrintToString(path);
  }
}

// --run-dir may come anywhere, and every command's help shows it.
TEST(Cli, RunDirIsInEveryHelpAndAcceptedAfterTheSubcommand) {
  for (auto path : all_command_paths()) {
    path.emplace_back("--help");
    EXPECT_NE(run(path).out.find("--run-dir"), std::string::npos) << testing::PrintToString(path);
  }
  const auto dir =
      std::filesystem::temp_directory_path() / ("edgeshed-rd-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"--run-dir", dir.string(), "pin", "high"},
                                             {"pin", "high", "--run-dir", dir.string()},
                                             {"pin", "--run-dir", dir.string(), "high"}}) {
    auto o = run(args);
    EXPECT_EQ(o.code, 1) << testing::PrintToString(args) << o.err;
    EXPECT_NE(o.err.find("needs the daemon"), std::string::npos) << o.err;
  }
  std::filesystem::remove_all(dir);
}

// The daemon's runner is told the run directory and that it was named.
TEST(Cli, RunHandsTheNamedRunDirectoryToTheDaemon) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"run", "--config", "e.toml", "--run-dir", "/tmp/named"},
           {"--run-dir", "/tmp/named", "run", "--config", "e.toml"}}) {
    std::string got_dir;
    bool got_given = false;
    std::vector<const char*> argv = {"edgeshed"};
    for (const auto& a : args) argv.push_back(a.c_str());
    int code = run_cli(static_cast<int>(argv.size()), argv.data(),
                       [&](const std::string&, const std::string& dir, bool given) {
                         got_dir = dir;
                         got_given = given;
                         return 0;
                       });
    EXPECT_EQ(code, 0);
    EXPECT_EQ(got_dir, "/tmp/named");
    EXPECT_TRUE(got_given);
  }
}

TEST(Cli, VersionNamesTheAbiLibbpfAndKernel) {
  auto o = run({"--version"});
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.out.rfind("edgeshed ", 0), 0u) << o.out;
  for (const char* word : {"data plane ABI ", "libbpf ", "kernel "}) {
    EXPECT_NE(o.out.find(word), std::string::npos) << word << " in " << o.out;
  }
}

TEST(Cli, UsageErrorsExit2WithOneLineNamingTheHelp) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{}, "A subcommand is required"},
      {{"launch"}, "unknown command 'launch'"},
      {{"stauts"}, "did you mean 'status'?"},
      {{"port", "ad", "80"}, "did you mean 'add'?"},
      {{"reset", "port:70000"}, "1..65535"},
      {{"reset", "bogus"}, "cannot reset 'bogus'"},
      {{"events", "-n", "-1"}, "-1"},
      {{"attach", "-i", "eth0", "--port", "0"}, "port '0'"},
      {{"attach", "-i", "es-no-such0"}, "give --port"},
      {{"policy", "-i", "eth0", "--class", "normal", "--burst", "10"}, "--burst requires --rate"},
      {{"run", "--config", "x.toml", "--run-dir"}, "--run-dir"},
      {{"mode", "panic"}, "panic not in {off,observe,enforce}"},
      {{"mode"}, "MODE is required"},
      {{"action", "tarpit"}, "tarpit"},
      {{"pin"}, "LEVEL is required"},
      {{"pin", "extreme"}, "extreme"},
      {{"pin", "high", "--for", "5x"}, "duration '5x'"},
      {{"pin", "high", "--for", "0"}, "must be over 0"},
      {{"override", "normal"}, "give --admit-fraction, --cap, --rate or --clear"},
      {{"override", "normal", "--admit-fraction", "1.5"}, "1.5"},
      {{"override", "normal", "--burst", "5"}, "--burst requires --rate"},
      {{"override", "normal", "--clear", "--cap", "3"}, "excludes"},
      {{"port", "add", "0"}, "0"},
      {{"port", "add", "70000"}, "70000"},
      {{"port"}, "subcommand"},
      {{"prefix", "add", "192.0.2.1/24", "--class", "critical"}, "host bits"},
      {{"prefix", "add", "192.0.2.0/24"}, "--class is required"},
      {{"status", "--interval", "-1"}, "-1"},
      {{"events", "--duration", "soon"}, "duration 'soon'"},
      {{"attach", "--hook", "xdp"}, "--iface is required"},
      {{"attach", "-i", "eth0", "--hook", "ebpf"}, "ebpf"},
      {{"top", "--interval", "0"}, "0"},
      {{"completion", "zsh"}, "zsh"},
  };
  for (const auto& [args, words] : cases) {
    auto o = run(args);
    EXPECT_EQ(o.code, 2) << testing::PrintToString(args) << ": " << o.err;
    EXPECT_EQ(o.err.rfind("edgeshed: ", 0), 0u) << o.err;
    EXPECT_NE(o.err.find(words), std::string::npos)
        << testing::PrintToString(args) << ": " << o.err;
    EXPECT_NE(o.err.find("--help`)"), std::string::npos) << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << "not one line: " << o.err;
  }
}

TEST(Cli, RuntimeErrorsExit1WithOneLine) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("edgeshed-cli-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--run-dir", dir.string(), "pin", "high"}, "needs the daemon, and none is running"},
      {{"--run-dir", dir.string(), "unpin"}, "needs the daemon"},
      {{"--run-dir", dir.string(), "override", "normal", "--cap", "5"}, "needs the daemon"},
      {{"--run-dir", dir.string(), "reset"}, "needs the daemon"},
      {{"status", "--iface", "es-no-such0"}, "nothing is attached on es-no-such0"},
      {{"events", "--iface", "es-no-such0", "--count", "1"}, "nothing is attached on es-no-such0"},
      {{"mode", "enforce", "--iface", "es-no-such0", "--run-dir", dir.string()},
       "nothing is attached on es-no-such0"},
  };
  for (const auto& [args, words] : cases) {
    auto o = run(args);
    EXPECT_EQ(o.code, 1) << testing::PrintToString(args) << ": " << o.err;
    EXPECT_EQ(o.err.rfind("edgeshed: ", 0), 0u) << o.err;
    EXPECT_NE(o.err.find(words), std::string::npos)
        << testing::PrintToString(args) << ": " << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << "not one line: " << o.err;
  }
  std::filesystem::remove_all(dir);
}

TEST(Cli, CompletionScriptCoversEveryCommandAndIsValidBash) {
  auto o = run({"completion", "bash"});
  ASSERT_EQ(o.code, 0);
  for (const auto& path : all_command_paths()) {
    if (path.empty()) continue;
    std::string joined;
    for (const auto& p : path) joined += (joined.empty() ? "" : " ") + p;
    EXPECT_NE(o.out.find("\"" + joined + "\")"), std::string::npos) << joined;
  }
  EXPECT_NE(o.out.find("complete -F _edgeshed edgeshed"), std::string::npos);
  EXPECT_NE(o.out.find("off observe enforce"), std::string::npos);

  // Sourced by bash, it completes a subcommand and a choice.
  EXPECT_EQ(completions({"edgeshed mo", "edgeshed mode en", "edgeshed port add 80 --class b"}),
            "mode\nenforce\nbackground\n");
}

// Every positional and every option's value: reset's targets, file names
// after run --config, and nothing (no options) where a number goes.
TEST(Cli, CompletionOffersResetTargetsFilesAndNothingForNumbers) {
  EXPECT_EQ(completions({"edgeshed reset cl", "edgeshed run --config ed", "edgeshed events -n \"\"",
                         "edgeshed override critical --cap \"\""}),
            "class:critical class:normal class:background\nedge.toml\n\n\n");
}

}  // namespace
}  // namespace edgeshed
