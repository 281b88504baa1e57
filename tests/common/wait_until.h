// Polls until `done` or the timeout; the tests' only way of waiting for a
// worker thread.
#pragma once

#include <chrono>
#include <thread>

namespace edgeshed::testing {

template <class F>
bool wait_until(F done, std::chrono::milliseconds timeout = std::chrono::milliseconds(3000)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

}  // namespace edgeshed::testing
