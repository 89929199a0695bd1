// A pause point: a runnable placed on a worker (or a runtime's loop) that counts itself
// arrived at a shared gate and sleeps on the gate's futex word until the dumper opens it.
// The gate is shared by the dumper and the pause points, so a late pause point (one that
// runs after the dumper gave up waiting, or is discarded at shutdown) finds it alive and
// already open. Used by the task dump (src/sched/task_dump.cpp, src/task/runtime_dump.cpp).
#pragma once

#include <saturn/detail/atomic.hpp>
#include <saturn/loop/runnable.hpp>

#include <memory>

namespace saturn::detail {

struct pause_gate {
  atomic<std::uint32_t> arrived{0};
  atomic<std::uint32_t> open{0};  // the futex word paused threads sleep on

  /// Lets the paused threads go. The dumper's thread, once.
  void release() noexcept {
    // ordering: release pairs with the pause points' acquire: the reads are done.
    open.store(1, std::memory_order_release);
    futex_wake(&open, static_cast<int>(arrived.load(std::memory_order_relaxed)) + 1);
  }
};

/// Placed on one thread's queue; runs once (or is discarded at shutdown) and deletes itself.
struct pause_point : runnable {
  std::shared_ptr<pause_gate> gate;
  explicit pause_point(std::shared_ptr<pause_gate> g) : gate(std::move(g)) { m_fn = &pause_point::run; }
  static void run(runnable* r, run_mode mode) noexcept {
    std::unique_ptr<pause_point> self(static_cast<pause_point*>(r));
    pause_gate& g = *self->gate;
    // ordering: release: the thread's earlier work (its last task's writes) happens
    // before the dumper's acquire load of the count.
    g.arrived.fetch_add(1, std::memory_order_release);
    if (mode != run_mode::run)
      return;  // shutdown: nothing to hold
    // ordering: acquire pairs with the dumper's release of the gate: its reads are done.
    while (g.open.load(std::memory_order_acquire) == 0)
      futex_wait(&g.open, 0);
  }
};

}  // namespace saturn::detail
