#include "cli/interrupt.h"

#include <csignal>

namespace edgeshed {
namespace {

volatile std::sig_atomic_t g_interrupted = 0;

void on_signal(int /*signo*/) { g_interrupted = 1; }

}  // namespace

void catch_interrupts() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: poll() returns EINTR at once
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

bool interrupted() { return g_interrupted != 0; }

}  // namespace edgeshed
