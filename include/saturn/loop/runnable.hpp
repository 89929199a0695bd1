/// \file
/// The two intrusive nodes the loop's user part moves around without allocating:
/// `runnable` (ready to run on the loop thread: event_loop::post) and `timer_node`
/// (waiting for a deadline in the loop's timer heap: event_loop::add_timer). The third,
/// `operation` (in flight in the kernel), is for implementers: saturn/ext/operation.hpp.
#pragma once

#include <saturn/loop/clock.hpp>

#include <cstdint>

namespace saturn {

/// What a runnable is asked to do when the loop hands it back.
enum class run_mode : std::uint8_t {
  run,      ///< run it now
  discard,  ///< the loop is being destroyed: release it without running user code
};

/// Work that is ready to run on a loop thread (a callback, or a coroutine to resume). An
/// intrusive FIFO node: posting it allocates nothing.
///
/// Threading: `m_fn` runs on the thread of the loop it was posted to.
struct runnable {
  using run_fn = void (*)(runnable* self, run_mode mode) noexcept;
  runnable* m_next_runnable = nullptr;
  run_fn m_fn = nullptr;
};

namespace detail {
/// The runnable this thread is running: set just before a loop or a worker calls its m_fn
/// with run_mode::run. A task woken from a wait is resumed through its runnable (its
/// promise), so an awaiter that keeps no state of its own (event::wait(), whose awaitable
/// is the event itself) finds the task it resumes in from here in await_resume.
/// Threading: per thread.
extern constinit thread_local runnable* t_running;

/// Runs `r` now (run_mode::run), recording it in t_running.
inline void run_runnable(runnable* r) noexcept {
  t_running = r;
  r->m_fn(r, run_mode::run);
}

/// An intrusive FIFO of runnables (through m_next_runnable). Threading: one thread's use.
struct runnable_fifo {
  runnable* head = nullptr;
  runnable* tail = nullptr;

  runnable* pop() noexcept {
    runnable* r = head;
    if (r != nullptr) {
      head = r->m_next_runnable;
      if (head == nullptr)
        tail = nullptr;
    }
    return r;
  }
  void push(runnable* r) noexcept {
    r->m_next_runnable = nullptr;
    if (tail != nullptr)
      tail->m_next_runnable = r;
    else
      head = r;
    tail = r;
  }
};
}  // namespace detail

/// A deadline in the loop's timer heap (timers live in the loop, not in the kernel: one
/// kernel wait with a timeout covers the nearest of them).
///
/// Threading: armed, cancelled and fired on the owning loop's thread only. `m_fire` is
/// called at or after the deadline — never before it.
struct timer_node {
  using fire_fn = void (*)(timer_node* self, run_mode mode) noexcept;
  static constexpr std::uint32_t npos = ~std::uint32_t{0};
  clock::time_point m_deadline{};
  std::uint32_t m_heap_index = npos;
  fire_fn m_fire = nullptr;

  /// True while armed in a heap.
  bool armed() const noexcept { return m_heap_index != npos; }
};

}  // namespace saturn
