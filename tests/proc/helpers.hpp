// Shared helpers for the proc tests.
#pragma once

#include <saturn/proc.hpp>
#include <saturn/sched/thread_pool.hpp>
#include <saturn/task/runtime.hpp>
#include <saturn/task/this_task.hpp>
#include <saturn/task/time.hpp>

#include <atomic>
#include <chrono>
#include <thread>

namespace proc_test {

/// Spins (yielding the thread) until `pred()` or a generous deadline; returns pred().
template <class Pred>
bool eventually(Pred pred, std::chrono::seconds limit = std::chrono::seconds(20)) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > end)
      return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

}  // namespace proc_test
