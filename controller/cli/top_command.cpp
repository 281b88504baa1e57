// top: a live view of status with a minute of history; q or Ctrl-C quits
// and the terminal is restored on every way out.
#include <poll.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <iostream>
#include <optional>

#include "cli/argument_checks.h"
#include "cli/commands.h"
#include "cli/interface_rates.h"
#include "cli/interface_targets.h"
#include "cli/interrupt.h"
#include "cli/status_model.h"
#include "cli/top_view.h"

namespace edgeshed {
namespace {

// Raw keyboard and the alternate screen while alive.
class TerminalGuard {
 public:
  TerminalGuard() {
    if (tcgetattr(STDIN_FILENO, &saved_) == 0) {
      termios raw = saved_;
      raw.c_lflag &= static_cast<tcflag_t>(~(ICANON | ECHO));  // ISIG stays: Ctrl-C works
      raw.c_cc[VMIN] = 0;
      raw.c_cc[VTIME] = 0;
      have_termios_ = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
    }
    std::cout << "\x1b[?1049h\x1b[?25l" << std::flush;
  }
  ~TerminalGuard() {
    std::cout << "\x1b[?25h\x1b[?1049l" << std::flush;
    if (have_termios_) tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
  }
  TerminalGuard(const TerminalGuard&) = delete;
  TerminalGuard& operator=(const TerminalGuard&) = delete;

 private:
  termios saved_{};
  bool have_termios_ = false;
};

size_t terminal_width() {
  winsize ws{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 160;
}

std::string now_text() {
  time_t t = time(nullptr);
  tm local{};
  localtime_r(&t, &local);
  char buf[16];
  if (strftime(buf, sizeof(buf), "%H:%M:%S", &local) == 0) return "--:--:--";
  return buf;
}

// Waits up to timeout for a key; true when it was q.
bool quit_key(std::chrono::milliseconds timeout) {
  if (!isatty(STDIN_FILENO)) {  // no keyboard: just wait (a signal ends it early)
    poll(nullptr, 0, static_cast<int>(timeout.count()));
    return false;
  }
  pollfd p{STDIN_FILENO, POLLIN, 0};
  if (poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return false;
  char c = 0;
  return read(STDIN_FILENO, &c, 1) == 1 && (c == 'q' || c == 'Q');
}

nlohmann::ordered_json read_status(const CliContext& ctx, std::vector<InterfaceReading>& previous) {
  std::vector<InterfaceReading> now;
  for (const auto& iface : attached_interfaces()) {
    auto r = read_interface(iface);
    InterfaceReading reading = r ? std::move(*r) : unreadable_interface(iface, r.error().message);
    for (const auto& p : previous) {
      if (p.status.iface == iface) add_rates(reading, p);
    }
    now.push_back(std::move(reading));
  }
  previous = now;
  const auto daemon = read_daemon(ctx.run_dir);
  return status_json(daemon.state, daemon.health, now);
}

}  // namespace

void add_top_command(CLI::App& app, CliContext& ctx) {
  struct Args {
    double interval_s = 1.0;
    uint32_t iterations = 0;
    bool verbose = false;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "top",
      "Live view of level, signals and per-class rates, with a minute of sparklines (q or "
      "Ctrl-C quits and restores the terminal)");
  cmd->add_option("--interval", args->interval_s,
                  "Time between refreshes (e.g. 500ms, 2s; a bare number is seconds)")
      ->transform(seconds_validator(0.1, 60.0))
      ->capture_default_str();
  cmd->add_option("--iterations", args->iterations, "Stop after this many frames (0: until q)");
  cmd->add_flag("-v,--verbose", args->verbose,
                "Every signal, counter and setting (the default fits 80 columns)");
  cmd->callback([args, &ctx] {
    ctx.run = [args, &ctx] {
      if (auto t = target_interfaces(""); !t) return fail(t.error().message);
      catch_interrupts();
      std::vector<InterfaceReading> previous;
      TopHistory history;
      std::optional<TerminalGuard> terminal;
      if (isatty(STDOUT_FILENO)) terminal.emplace();
      const auto interval =
          std::chrono::milliseconds(static_cast<int64_t>(args->interval_s * 1000));
      for (uint32_t frame = 0; !interrupted(); ++frame) {
        auto status = read_status(ctx, previous);
        if (frame > 0) history.add(status);  // the first frame has no rates yet
        std::string out = terminal ? "\x1b[H" : "";
        const size_t width = terminal_width();
        for (auto line : top_frame(status, history, now_text(), args->interval_s,
                                   args->verbose || ctx.verbose)) {
          // Only status lines can be too wide, and they are ASCII.
          if (line.size() > width && line.find('|') == std::string::npos) line.resize(width);
          out += line + (terminal ? "\x1b[K\n" : "\n");
        }
        if (terminal) out += "\x1b[J";
        std::cout << out << std::flush;
        if (args->iterations && frame + 1 >= args->iterations) break;
        if (quit_key(interval)) break;
      }
      return 0;
    };
  });
}

}  // namespace edgeshed
