// Polling with a deadline, for tests that wait on another thread or process.
#pragma once

#include <chrono>
#include <thread>

namespace saturn_test {

/// Polls `pred` every `interval` until it holds or `limit` passes; returns pred().
template <class Pred>
inline bool wait_until(Pred pred, std::chrono::milliseconds limit,
                       std::chrono::microseconds interval = std::chrono::microseconds(50)) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > until)
      return pred();
    std::this_thread::sleep_for(interval);
  }
  return true;
}

}  // namespace saturn_test
