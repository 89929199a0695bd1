// worker_spread: puts N tasks on N distinct workers of a thread_pool, for the servers'
// one-SO_REUSEPORT-listener-per-worker mode.
//
// A listener's multishot accept lives on the loop of the worker that first awaits it, and
// the connection tasks it spawns start on that worker. The pool has no placement call, so
// the N tasks meet at a barrier first: each holds its worker (yielding the thread) until
// all N have arrived, which forces them onto distinct workers. The wait is bounded
// (200 ms): if fewer workers than tasks are free, the tasks go on where they are.
#pragma once

#include <atomic>
#include <chrono>
#include <thread>

namespace apps {

/// Threading: arrive() from each of the tasks, any worker; `expected` is set before
/// they are spawned. Must outlive the tasks' calls to arrive().
struct worker_spread {
  std::atomic<unsigned> arrived{0};
  unsigned expected = 1;

  /// Call first thing in each task (before its first suspension).
  void arrive() noexcept {
    arrived.fetch_add(1, std::memory_order_acq_rel);
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
    while (arrived.load(std::memory_order_acquire) < expected && std::chrono::steady_clock::now() < until)
      std::this_thread::yield();
  }
};

}  // namespace apps
